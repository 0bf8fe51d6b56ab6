// Process and UI helpers for the VS Code end-to-end tests (code-server + headless Chromium).
//
// Every child runs in its own process group (detached) and is killed as a group, so nothing
// (code-server, its extension host, `cadenza serve`, the fake model) outlives the run; an exit
// hook kills whatever is left even when the runner dies on an exception.

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

const groups = new Set();

function killGroupNow(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

process.on("exit", () => {
  for (const pid of groups) killGroupNow(pid, "SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const pid of groups) killGroupNow(pid, "SIGKILL");
    process.exit(130);
  });
}

/** Start `command` in a new process group, stdout/stderr appended to `logFile`. */
export function startGroup(command, args, { env, cwd, logFile, stdin = "ignore" }) {
  const log = fs.openSync(logFile, "a");
  const child = spawn(command, args, { env, cwd, detached: true, stdio: [stdin, stdin === "pipe" ? "pipe" : log, log] });
  groups.add(child.pid);
  child.on("exit", () => fs.closeSync(log));
  return child;
}

/** SIGTERM the group, then SIGKILL it after `graceMs`. */
export async function stopGroup(child, graceMs = 3000) {
  if (!child || child.pid === undefined) return;
  killGroupNow(child.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && groupAlive(child.pid)) await sleep(100);
  killGroupNow(child.pid, "SIGKILL");
  groups.delete(child.pid);
}

function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll `probe` until it returns a truthy value; fail with `what` and the last error after `timeoutMs`. */
export async function waitFor(what, probe, { timeoutMs = 30000, intervalMs = 250, failFast = () => false } = {}) {
  const started = Date.now();
  let last;
  while (Date.now() - started < timeoutMs) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      if (failFast(error)) throw error;
      last = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(
    `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${last ? ` (last error: ${last.message ?? last})` : ""}`,
  );
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The environment without the person's model settings, with XDG folders under `home`. */
export function isolatedEnv(home, extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(OPENAI_|CADENZA_|OLLAMA_|ANTHROPIC_|XDG_|VSCODE_|ELECTRON_)/.test(key)) continue;
    env[key] = value;
  }
  for (const name of ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"]) {
    const folder = path.join(home, name.toLowerCase());
    fs.mkdirSync(folder, { recursive: true });
    env[name] = folder;
  }
  return { ...env, ...extra };
}

/** Run a command to completion; throws with its output when it fails. */
export function run(command, args, { env, cwd, timeoutMs = 120000 } = {}) {
  const result = spawnSync(command, args, { env, cwd, encoding: "utf8", timeout: timeoutMs });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} failed (status ${result.status}, signal ${result.signal}${result.error ? `, ${result.error.message}` : ""}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** The last `lines` lines of a text file ("" when missing). */
export function tail(file, lines = 60) {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** Files under `dir` whose path matches `pattern`, recursively. */
export function findFiles(dir, pattern) {
  const found = [];
  const walk = (d) => {
    let entries = [];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (pattern.test(full)) found.push(full);
    }
  };
  walk(dir);
  return found;
}
