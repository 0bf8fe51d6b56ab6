// "Install the .vsix and run a task with nothing else configured": no cadenza.* setting at all.
// The extension finds `cadenza` on the PATH and the server runs its embedded local model
// (llama.cpp). The model is the one named by CADENZA_VSCODE_LOCAL_MODEL (default the small
// smollm2-135m that scripts/test.sh pulls; `local/qwen2.5-coder-1.5b` is what a person gets
// when they configure nothing, too slow for CI), given through the environment VS Code runs in
// (CADENZA_MODEL), never through VS Code settings.
//
// The session is bounded to a few steps by a cadenza.toml in the (isolated) user config folder.
// Structural assertions only (a small model's answer is not fixed): the server started from the
// PATH, the progress notification appeared, and the session ended with a stop reason that is
// not an error. Screenshots in test-artifacts/vscode/local/.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { PYTHON, REPO, channelLog, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { isolatedEnv, run, waitFor } from "./harness.mjs";

const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode", "local");
const MODEL = process.env.CADENZA_VSCODE_LOCAL_MODEL || "smollm2-135m";
const MAX_STEPS = 1;

let tmp, vscode;

/** The pulled model's folder and the llama-server binary, or an error saying what to do. */
function localModelDir() {
  const out = run(PYTHON, [
    "-c",
    [
      "import sys",
      "from cadenza.providers.llama_server import LlamaServerError, find_binary",
      "from cadenza.providers.models import model_path",
      "try:\n    find_binary()\nexcept LlamaServerError as exc:\n    sys.exit(f'no llama-server: {exc}')",
      `p = model_path(${JSON.stringify(MODEL)})`,
      `sys.exit('${MODEL} is not pulled: run cadenza models pull ${MODEL}') if p is None else print(p.parent)`,
    ].join("\n"),
  ]);
  return out.trim();
}

describe("Cadenza in VS Code with nothing configured (embedded local model)", { timeout: 900000 }, () => {
  before(async () => {
    prerequisites();
    freshArtifacts(ARTIFACTS);
    const modelsDir = localModelDir();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-local-"));
    const workspace = path.join(tmp, "inventory");
    fs.cpSync(path.join(REPO, "examples", "inventory"), workspace, { recursive: true });
    const env = isolatedEnv(path.join(tmp, "home"), {
      // `cadenza` on the PATH, as after `pip install cadenza`.
      PATH: `${path.dirname(PYTHON)}${path.delimiter}${process.env.PATH}`,
      CADENZA_MODEL: `local/${MODEL}`,
      CADENZA_MODELS_DIR: modelsDir,
      // As when VS Code is started from a terminal (`code .`): the extension host keeps this
      // environment. Otherwise the VS Code server re-reads the login shell's, whose PATH
      // (/etc/profile) does not have the venv.
      VSCODE_CLI: "1",
    });
    // A small model rarely finishes: bound the session in the server's own config file (not a
    // VS Code setting) so the test takes seconds, not minutes.
    fs.mkdirSync(path.join(env.XDG_CONFIG_HOME, "cadenza"), { recursive: true });
    fs.writeFileSync(path.join(env.XDG_CONFIG_HOME, "cadenza", "cadenza.toml"), `max_steps = ${MAX_STEPS}\nmax_tokens = 256\n`);
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

  it("runs a task from the palette to its end", async () => {
    const { page, wb } = vscode;
    try {
      await wb.openFile("inventory.py");
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Add a docstring to report.py's main function");
      await page.keyboard.press("Enter");
      await wb.waitForToast("Cadenza", 300000); // the server's start, slower when loaded
      await wb.shot("local-running", `nothing configured: a task running on the embedded local model (local/${MODEL})`);
      const session = wb.panel().locator("section.session[data-stop-reason]");
      await waitFor("the session's end in the Cadenza panel", async () => {
        const failure = (await wb.toastTexts()).find((t) => /Cadenza could not|is not installed|server crashed/.test(t));
        if (failure) throw Object.assign(new Error(`error notification: ${failure}`), { fatal: true });
        return (await session.count()) > 0;
      }, { timeoutMs: 600000, intervalMs: 1000, failFast: (error) => error.fatal });
      const reason = await session.getAttribute("data-stop-reason");
      await wb.shot("local-ended", `the local-model session ended (${reason})`);
      const log = channelLog(vscode.userData);
      assert.match(log, /from cadenza on the PATH/, "the server was not started from the PATH");
      assert.ok(!["error", "server_exit"].includes(reason), `the session ended with ${reason}:\n${await session.innerText()}`);
      console.log(`# local/${MODEL}: the session ended with ${reason}`);
    } catch (error) {
      await page.screenshot({ path: path.join(ARTIFACTS, "failure-local.png") }).catch(() => {});
      error.message += `\n\nscreenshot: test-artifacts/vscode/local/failure-local.png\n${vscode.diagnostics()}`;
      throw error;
    }
  });
});
