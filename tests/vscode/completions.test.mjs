// Inline completions in real VS Code with the real Qwen2.5-Coder-1.5B behind `cadenza serve`
// (the one model Cadenza pulls that can fill in the middle: SmolLM2 cannot). The status bar item
// turns `cadenza.completions.enabled` off and on; typing in a Python file starts the server and
// shows ghost text; Tab accepts it, and the buffer (saved, then read from disk) has it.
// Skipped, saying so, when the model is not pulled (`cadenza models pull qwen2.5-coder-1.5b`,
// 1.1 GB). What the model writes is not fixed: the test asserts that the accepted text is the
// ghost text it showed. Screenshots in test-artifacts/vscode/completions/.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { PYTHON, REPO, channelLog, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { isolatedEnv, sleep, waitFor } from "./harness.mjs";

const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode", "completions");
const MODEL = "qwen2.5-coder-1.5b";
const SOURCE = "import math\n\n\ndef area(radius):\n    return math.pi * radius ** 2\n\n\ndef perimeter(radius):\n    \n";
const TYPED = "return 2 * math.";

/** The pulled model's folder, or why the test cannot run (no llama-server, model not pulled). */
function fimModel() {
  const script = [
    "import sys",
    "from cadenza.providers.llama_command import LlamaServerError, find_binary",
    "from cadenza.providers.models import model_path",
    "try:\n    find_binary()\nexcept LlamaServerError as exc:\n    sys.exit(f'no llama-server: {exc}')",
    `p = model_path(${JSON.stringify(MODEL)})`,
    `sys.exit('${MODEL} is not pulled (cadenza models pull ${MODEL}): inline completions need a model that can fill in the middle') if p is None else print(p.parent)`,
  ].join("\n");
  const result = spawnSync(PYTHON, ["-c", script], { encoding: "utf8" });
  if (result.status === 0) return { dir: result.stdout.trim() };
  return { skip: (result.stderr.trim().split("\n").pop() || `${PYTHON} failed`) };
}

const model = fs.existsSync(PYTHON) ? fimModel() : { dir: undefined };
let tmp, workspace, vscode;

describe("Inline completions in VS Code (Qwen2.5-Coder-1.5B)", { timeout: 1200000, skip: model.skip }, () => {
  before(async () => {
    prerequisites();
    freshArtifacts(ARTIFACTS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-completions-"));
    workspace = path.join(tmp, "shapes");
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, "shapes.py"), SOURCE);
    const env = isolatedEnv(path.join(tmp, "home"), {
      PATH: `${path.dirname(PYTHON)}${path.delimiter}${process.env.PATH}`,
      CADENZA_MODEL: `local/${MODEL}`,
      CADENZA_MODELS_DIR: model.dir,
      VSCODE_CLI: "1", // keep this environment in the extension host (see local-model.test.mjs)
    });
    fs.mkdirSync(path.join(env.XDG_CONFIG_HOME, "cadenza"), { recursive: true });
    fs.writeFileSync(path.join(env.XDG_CONFIG_HOME, "cadenza", "cadenza.toml"), "context_size = 2048\n");
    vscode = await launchVSCode({ tmp, workspace, env, artifacts: ARTIFACTS, settings: {} });
  });

  after(async () => {
    if (vscode) {
      const index = vscode.wb.shots.map((s) => `${path.basename(s.file)}: ${s.description}`).join("\n");
      fs.writeFileSync(path.join(ARTIFACTS, "screenshots.txt"), `${index}\n`);
    }
    await vscode?.close();
    if (tmp && !process.env.CADENZA_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function failing(name, error) {
    await vscode.page.screenshot({ path: path.join(ARTIFACTS, `failure-${name}.png`) }).catch(() => {});
    error.message += `\n\nscreenshot: test-artifacts/vscode/completions/failure-${name}.png\n${vscode.diagnostics()}`;
    return error;
  }

  it("the status bar item turns completions off and on", async () => {
    const { page, wb } = vscode;
    try {
      const item = page.locator(".statusbar-item", { hasText: /Completions: (on|off)/ });
      await item.waitFor({ timeout: 60000 });
      assert.match(await item.innerText(), /Completions: on/, "completions are on by default");
      const userSettings = path.join(vscode.userData, "User", "settings.json");
      await item.locator("a, .statusbar-item-label").first().click();
      await waitFor("the item to say off", async () => /Completions: off/.test(await item.innerText()));
      await waitFor("the user setting to be written", () => /"cadenza\.completions\.enabled": false/.test(fs.readFileSync(userSettings, "utf8")));
      await wb.shot("status-off", "the status bar item after a click: Completions: off (the user setting is false)");
      await item.locator("a, .statusbar-item-label").first().click();
      await waitFor("the item to say on", async () => /Completions: on/.test(await item.innerText()));
      await waitFor("the user setting to be true again", () => /"cadenza\.completions\.enabled": true/.test(fs.readFileSync(userSettings, "utf8")));
      await wb.shot("status-on", "a second click: Completions: on");
    } catch (error) {
      throw await failing("status", error);
    }
  });

  it("ghost text appears as you type and Tab accepts it", async () => {
    const { page, wb } = vscode;
    try {
      await wb.openFile("shapes.py");
      await page.keyboard.press("Control+G");
      await wb.waitForQuickInput(":");
      await wb.quickInput().locator(".quick-input-box input").fill(":9");
      await wb.quickInput().locator(".quick-input-box input").press("Enter");
      await sleep(300);
      await page.keyboard.press("End");
      const started = Date.now();
      await page.keyboard.type(TYPED, { delay: 40 });

      const editor = page.locator(".editor-group-container.active .monaco-editor");
      const ghost = editor.locator(".ghost-text-decoration, .ghost-text");
      // The first edit starts the server, and its first request the model: ask again (Alt+\,
      // Trigger Inline Suggestion) while nothing shows.
      let lastAsk = Date.now();
      await waitFor("ghost text in the editor", async () => {
        // The first line's ghost text is inline (.ghost-text-decoration), the next lines a view
        // zone (.ghost-text) that may start with blanks.
        const texts = await ghost.evaluateAll((nodes) => nodes.map((n) => n.textContent ?? ""));
        if (texts.join("").replace(/\u00a0/g, " ").trim() !== "") return true;
        if (Date.now() - lastAsk > 15000) {
          lastAsk = Date.now();
          await page.keyboard.press("Alt+Backslash");
        }
        return false;
      }, { timeoutMs: 300000, intervalMs: 250 }).catch((error) => {
        // The server drops a completion that takes over 4 s: on a loaded machine every answer is empty.
        error.message += " (every answer was empty: the server drops a completion over 4 s; is the machine loaded?)";
        throw error;
      });
      const inline = await editor.locator(".ghost-text-decoration").evaluateAll((nodes) => nodes.map((n) => n.textContent ?? ""));
      const shown = inline.join("").replace(/\u00a0/g, " ");
      console.log(`# ghost text after ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(shown)}`);
      await wb.shot("ghost-text", `ghost text at the cursor after typing "${TYPED}" in perimeter()`);
      assert.match(channelLog(vscode.userData), /starting the server for inline completions/, "the edit did not start the server");

      await page.keyboard.press("Tab");
      await waitFor("the ghost text to be accepted", async () => (await ghost.count()) === 0, { timeoutMs: 10000 });
      await wb.shot("accepted", "after Tab: the completion is in the buffer");
      const lines = (await wb.editorText()).split("\n");
      const line = lines.find((l) => l.includes(TYPED));
      assert.ok(line, `no line with "${TYPED}" in the editor:\n${lines.join("\n")}`);
      assert.ok(line.length > `    ${TYPED}`.length, `Tab inserted nothing: ${JSON.stringify(line)}`);
      if (shown) assert.equal(line.trimEnd(), `    ${TYPED}${shown}`.trimEnd(), "the accepted text is not the ghost text shown");

      // The buffer, saved, is what the file holds now.
      await page.keyboard.press("Control+S");
      await waitFor("the save", async () => !(await wb.activeTabIsDirty()), { timeoutMs: 10000 });
      const saved = fs.readFileSync(path.join(workspace, "shapes.py"), "utf8").split("\n");
      assert.equal(saved[8].trimEnd(), line.trimEnd(), "the saved line is not the accepted one");
    } catch (error) {
      throw await failing("ghost-text", error);
    }
  });
});
