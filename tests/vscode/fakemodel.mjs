// The scripted model (fake_model.py) as a process for a test file: start it, script its
// replies, read the requests it received.

import assert from "node:assert/strict";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { PYTHON, REPO } from "./codeserver.mjs";
import { startGroup, tail, waitFor } from "./harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Start fake_model.py (listing `models` as Ollama and OpenAI-compatible servers do); resolves
 * once it printed where it listens. */
export async function startFakeModel(env, logFile, models = []) {
  const child = startGroup(PYTHON, [path.join(HERE, "fake_model.py"), ...models], { env, cwd: REPO, logFile, stdin: "pipe" });
  const urls = await waitFor("the fake model's addresses", () =>
    new Promise((resolve, reject) => {
      child.stdout.once("data", (data) => resolve(JSON.parse(String(data).split("\n")[0])));
      child.once("exit", (code) => reject(new Error(`fake_model.py exited with ${code}: ${tail(logFile)}`)));
    }),
  { timeoutMs: 30000 });

  async function control(pathname, body) {
    const response = await fetch(`${urls.control}${pathname}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.equal(response.status, 200, `fake model ${pathname}: HTTP ${response.status}`);
    return response.json();
  }

  return {
    child,
    baseUrl: urls.baseUrl,
    reset: () => control("/reset", {}),
    script: (...replies) => control("/script", { replies }),
    requests: () => control("/requests"),
  };
}

export const call = (name, args, id) => ({ tool_calls: [{ name, arguments: args, id }] });

/** The text of every message of a request with `role`. */
export function texts(request, role) {
  return request.messages.filter((m) => m.role === role).map((m) => String(m.content ?? ""));
}
