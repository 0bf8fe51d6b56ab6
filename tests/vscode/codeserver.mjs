// One VS Code for a test file: code-server with the packaged .vsix installed, a workspace, and
// headless Chromium on it. `launchVSCode` fails with a clear message when anything is missing
// or does not come up in time; `close` kills every process it started (process groups).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

import { findFiles, freePort, run, startGroup, stopGroup, tail, waitFor } from "./harness.mjs";
import { Workbench } from "./workbench.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "..", "..");
export const CODE_SERVER_VERSION = "4.100.3";
export const PYTHON = process.env.CADENZA_PYTHON || path.join(REPO, ".venv", "bin", "python");
export const CODE_SERVER =
  process.env.CODE_SERVER ||
  path.join(REPO, ".cache", "code-server", CODE_SERVER_VERSION, "node_modules", ".bin", "code-server");
export const VSIX = process.env.CADENZA_VSIX || path.join(REPO, "clients", "vscode", "dist", "cadenza.vsix");
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

/** Settings that keep VS Code quiet and predictable (no welcome page, no trust prompt, ...). */
export const WORKBENCH_SETTINGS = {
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.colorTheme": "Default Dark Modern",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "files.autoSave": "off",
  "editor.minimap.enabled": false,
  "chat.commandCenter.enabled": false,
  "window.commandCenter": false,
};

/** Throw, naming everything missing, when the VS Code tier cannot run. */
export function prerequisites() {
  const missing = [];
  if (!fs.existsSync(PYTHON)) missing.push(`${PYTHON} (set CADENZA_PYTHON, or run scripts/setup.sh)`);
  if (!fs.existsSync(CODE_SERVER)) missing.push(`${CODE_SERVER} (run tests/vscode/install-code-server.sh)`);
  if (!fs.existsSync(VSIX)) missing.push(`${VSIX} (npm run package in clients/vscode)`);
  if (!fs.existsSync(CHROMIUM)) missing.push(`${CHROMIUM} (apt-get install chromium)`);
  if (missing.length) throw new Error(`the VS Code tier cannot run; missing:\n  ${missing.join("\n  ")}`);
}

/** Clear a screenshot folder's files (not its subfolders). */
export function freshArtifacts(dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) fs.rmSync(path.join(dir, entry.name));
  }
}

/**
 * Install the .vsix, start code-server on `workspace` and open it in Chromium.
 *
 * @param {{tmp: string, workspace: string, settings: object, env: object, artifacts: string}} options
 */
export async function launchVSCode({ tmp, workspace, settings, env, artifacts }) {
  const userData = path.join(tmp, "user-data");
  const extensions = path.join(tmp, "extensions");
  // code-server's window is a remote one: settings scoped "machine" (cadenza.server.command,
  // cadenza.model, ...) apply from the remote machine's settings (Machine/), not from User/.
  for (const folder of ["User", "Machine"]) {
    fs.mkdirSync(path.join(userData, folder), { recursive: true });
    fs.writeFileSync(path.join(userData, folder, "settings.json"), JSON.stringify({ ...WORKBENCH_SETTINGS, ...settings }, null, 2));
  }
  const log = path.join(artifacts, "code-server.log");
  const serverArgs = ["--user-data-dir", userData, "--extensions-dir", extensions];
  run(CODE_SERVER, [...serverArgs, "--install-extension", VSIX], { env, timeoutMs: 180000 });
  const installed = fs.readdirSync(extensions).filter((d) => d.startsWith("cadenza.cadenza-"));
  assert.equal(installed.length, 1, `the .vsix did not install into ${extensions}: ${fs.readdirSync(extensions)}`);

  const port = await freePort();
  const codeServer = startGroup(
    CODE_SERVER,
    [
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      ...serverArgs,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      workspace,
    ],
    { env, cwd: tmp, logFile: log },
  );
  let browser;
  const close = async () => {
    await browser?.close().catch(() => {});
    await stopGroup(codeServer);
  };
  const diagnostics = () => {
    const channel = findFiles(userData, /Cadenza\.log$/).map((f) => `--- ${f}\n${tail(f, 80)}`);
    const exthost = findFiles(userData, /exthost\.log$/).map((f) => `--- ${f}\n${tail(f, 30)}`);
    return [...channel, ...exthost, `--- code-server\n${tail(log, 30)}`].join("\n");
  };
  try {
    await waitFor(`code-server on port ${port} (/healthz)`, async () => {
      if (codeServer.exitCode !== null) throw new Error(`code-server exited with ${codeServer.exitCode}: ${tail(log)}`);
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    }, { timeoutMs: 90000, intervalMs: 500 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.setDefaultTimeout(30000);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    const wb = new Workbench(page, artifacts);
    await wb.waitForWorkbench();
    return { page, wb, port, userData, close, diagnostics };
  } catch (error) {
    error.message += `\n${diagnostics()}`;
    await close();
    throw error;
  }
}

/** The Cadenza output channel as VS Code logs it (flushed within a second or so). */
export function channelLog(userData) {
  return findFiles(userData, /Cadenza\.log$/).map((f) => fs.readFileSync(f, "utf8")).join("\n");
}
