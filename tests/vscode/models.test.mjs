// The person's own Ollama models in the Cadenza view's model picker, end to end in real VS Code
// (code-server + headless Chromium, the packaged .vsix, the real `cadenza serve`): the person's
// cadenza.toml (the user config folder) configures an Ollama, here the scripted model of
// fake_model.py on 127.0.0.1 listing two models at /api/tags, and names one of them as the model.
// After the first message (the picker fills once the server has been asked something), the
// picker lists both beside the local models, each saying where it runs; choosing the other one
// sends the next message to it.
// Screenshots go to test-artifacts/vscode/models/.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { PYTHON, REPO, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { startFakeModel } from "./fakemodel.mjs";
import { isolatedEnv, stopGroup, tail, waitFor } from "./harness.mjs";

const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode", "models");
const OLLAMA_MODELS = ["qwen2.5-coder:7b", "deepseek-coder-v2:16b"];

let tmp, workspace, ollama, ollamaLog, vscode, page, wb;

describe("the person's Ollama models in the model picker (code-server)", { timeout: 600000 }, () => {
  before(async () => {
    prerequisites();
    freshArtifacts(ARTIFACTS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-models-"));
    workspace = path.join(tmp, "inventory");
    fs.cpSync(path.join(REPO, "examples", "inventory"), workspace, { recursive: true });
    const home = path.join(tmp, "home");
    const env = isolatedEnv(home);
    ollamaLog = path.join(ARTIFACTS, "ollama.log");
    ollama = await startFakeModel(env, ollamaLog, OLLAMA_MODELS);
    // The person's own settings, as they would write them for their Ollama.
    const config = path.join(env.XDG_CONFIG_HOME, "cadenza");
    fs.mkdirSync(config, { recursive: true });
    fs.writeFileSync(path.join(config, "cadenza.toml"), `[providers.ollama]\nbase_url = "${ollama.baseUrl}"\n`);
    vscode = await launchVSCode({
      tmp,
      workspace,
      env,
      artifacts: ARTIFACTS,
      settings: {
        "cadenza.model": `ollama/${OLLAMA_MODELS[1]}`,
        "cadenza.server.command": [PYTHON, "-m", "cadenza"],
        "cadenza.server.env": { CADENZA_MODELS_DIR: path.join(tmp, "models") },
        "cadenza.server.logLevel": "INFO",
      },
    });
    ({ page, wb } = vscode);
  });

  after(async () => {
    if (wb) {
      const index = wb.shots.map((s) => `${path.basename(s.file)}: ${s.description}`).join("\n");
      fs.writeFileSync(path.join(ARTIFACTS, "screenshots.txt"), `${index}\n`);
    }
    await vscode?.close();
    await stopGroup(ollama?.child);
    if (tmp && !process.env.CADENZA_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("lists the Ollama models with where they run, and the chosen one answers", async () => {
    try {
      await wb.openFile("inventory.py");
      await page.locator(".part.activitybar .action-item .action-label[aria-label^='Cadenza']").first().click();
      const view = wb.panel();
      await view.locator("button#new-session").waitFor({ timeout: 30000 });
      await ollama.script({ content: "Hello from the first model." }, { content: "Hello from the model just chosen." });
      await view.locator("button#new-session").click();
      await view.locator("textarea#prompt").click();
      await page.keyboard.type("Say hello");
      await page.keyboard.press("Enter");
      const session = view.locator("section.session.current");
      await session.getByText("Hello from the first model.").waitFor({ timeout: 60000 });

      const picker = view.locator("select#model");
      const where = `Ollama at ${new URL(ollama.baseUrl).host}`;
      for (const model of OLLAMA_MODELS) {
        const option = picker.locator(`option[value="ollama/${model}"]`);
        await waitFor(`the picker to list ollama/${model}`, async () => (await option.count()) === 1, { timeoutMs: 60000 });
        // Short: the model, where it runs and "default" on the configured one, never the id again.
        const mark = model === OLLAMA_MODELS[1] ? ", default" : "";
        assert.equal((await option.innerText()).trim(), `${model} (Ollama${mark})`);
      }
      const labels = (await picker.locator("option").allInnerTexts()).map((t) => t.trim());
      assert.ok(labels.some((t) => t.startsWith("qwen2.5-coder-1.5b (local")), `no local model in ${labels.join(" | ")}`);
      assert.ok(labels.filter((t) => /\bdefault\)/.test(t)).length <= 1, `"default" on more than one model: ${labels.join(" | ")}`);
      // A headless browser draws no native drop-down: the shot shows the options as a list box,
      // in a side bar widened (its sash dragged) so that the labels show whole.
      const sidebar = await page.locator(".part.sidebar").boundingBox();
      await page.mouse.move(sidebar.x + sidebar.width + 1, 400);
      await page.mouse.down();
      await page.mouse.move(sidebar.x + 760, 400, { steps: 8 });
      await page.mouse.up();
      await picker.evaluate((select, size) => {
        select.setAttribute("size", String(size));
        select.style.cssText = "width: 700px; max-width: none; flex: 0 0 auto";
      }, labels.length);
      await wb.shot("picker", `the model picker: the person's Ollama models (${where}) beside the local ones (drawn as a list: a headless browser has no native drop-down)`);
      await picker.evaluate((select) => {
        select.removeAttribute("size");
        select.style.cssText = "";
      });

      await picker.selectOption(`ollama/${OLLAMA_MODELS[0]}`);
      await view.locator("textarea#prompt").click();
      await page.keyboard.type("Again");
      await page.keyboard.press("Enter");
      await session.getByText("Hello from the model just chosen.").waitFor({ timeout: 60000 });
      const requests = await ollama.requests();
      assert.deepEqual(requests.map((r) => r.model), [OLLAMA_MODELS[1], OLLAMA_MODELS[0]]);
      await wb.shot("answered", `the next message went to ollama/${OLLAMA_MODELS[0]}, chosen in the picker; it answered`);
    } catch (error) {
      await page?.screenshot({ path: path.join(ARTIFACTS, "failure.png") }).catch(() => {});
      const offered = await wb?.panel().locator("select#model option").allInnerTexts().catch(() => []);
      error.message += `\n\nthe picker offered: ${offered.join(" | ")}`;
      error.message += `\n\nscreenshot: test-artifacts/vscode/models/failure.png\n${vscode?.diagnostics() ?? ""}\n--- ollama\n${tail(ollamaLog, 20)}`;
      throw error;
    }
  });
});
