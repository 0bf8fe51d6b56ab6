// "Pull model", end to end in real VS Code (code-server + headless Chromium, the packaged .vsix,
// the real `cadenza serve`): the configured local model is not pulled, so the first message ends
// with an error offering "Pull model"; the click runs `cadenza.pullModel`, which downloads the
// file from the download host and verifies it; the view and a notification say it is ready.
//
// The download host is Python's http.server on 127.0.0.1, named through a catalog file
// (CADENZA_MODEL_CATALOG, docs/local-model.md) as a mirror would be. The file is 3 MB of random
// bytes with its SHA-256 in the catalog: the flow stops at "ready" and never starts the model.
// Screenshots go to test-artifacts/vscode/pull-model/.

import assert from "node:assert/strict";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { PYTHON, REPO, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { freePort, isolatedEnv, startGroup, stopGroup, tail, waitFor } from "./harness.mjs";

const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode", "pull-model");
const MODEL = "tiny-test";

let tmp, workspace, host, hostLog, models, data, vscode, page, wb;

describe("Pull model when the local model is missing (code-server)", { timeout: 600000 }, () => {
  before(async () => {
    prerequisites();
    freshArtifacts(ARTIFACTS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-pull-"));
    workspace = path.join(tmp, "inventory");
    fs.cpSync(path.join(REPO, "examples", "inventory"), workspace, { recursive: true });

    // The download host: a folder served by Python's http.server on loopback.
    const www = path.join(tmp, "www");
    fs.mkdirSync(www);
    data = crypto.randomBytes(3 * 1024 * 1024);
    fs.writeFileSync(path.join(www, `${MODEL}.gguf`), data);
    const port = await freePort();
    hostLog = path.join(ARTIFACTS, "download-host.log");
    const env = isolatedEnv(path.join(tmp, "home"));
    host = startGroup(PYTHON, ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", www], { env, cwd: tmp, logFile: hostLog });
    const base = `http://127.0.0.1:${port}`;
    await waitFor("the download host", async () => (await fetch(`${base}/`)).ok, { timeoutMs: 20000 });

    const catalog = path.join(tmp, "catalog.toml");
    const sha256 = crypto.createHash("sha256").update(data).digest("hex");
    fs.writeFileSync(catalog, `[[model]]\nname = "${MODEL}"\nurl = "${base}/${MODEL}.gguf"\nsize = ${data.length}\nsha256 = "${sha256}"\ndescription = "a test file"\n`);
    models = path.join(tmp, "models");
    vscode = await launchVSCode({
      tmp,
      workspace,
      env,
      artifacts: ARTIFACTS,
      settings: {
        "cadenza.model": `local/${MODEL}`,
        "cadenza.server.command": [PYTHON, "-m", "cadenza"],
        "cadenza.server.env": { CADENZA_MODEL_CATALOG: catalog, CADENZA_MODELS_DIR: models },
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
    await stopGroup(host);
    if (tmp && !process.env.CADENZA_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("offers Pull model, downloads the model from the catalog's host and says it is ready", async () => {
    try {
      await wb.openFile("inventory.py");
      await page.locator(".part.activitybar .action-item .action-label[aria-label^='Cadenza']").first().click();
      const view = wb.panel();
      await view.locator("button#new-session").waitFor({ timeout: 30000 });
      await view.locator("button#new-session").click();
      await view.locator("textarea#prompt").click();
      await page.keyboard.type("Say hello");
      await page.keyboard.press("Enter");

      // The end: an error naming the model and the command, with Pull model in a toast and in the view.
      const toast = await wb.waitForToast(`cadenza models pull ${MODEL}`, 60000, /$^/);
      const button = toast.locator(".monaco-button", { hasText: "Pull model" });
      await button.waitFor();
      const session = view.locator("section.session.current");
      await session.locator(".end button", { hasText: "Pull model" }).waitFor();
      assert.ok(!fs.existsSync(path.join(models, `${MODEL}.gguf`)), "the model was there before the pull");
      // The picker (listed once the server started) knows the catalog's model, not downloaded yet.
      const option = view.locator(`select#model option[value="local/${MODEL}"]`);
      await waitFor("the model picker to list the catalog's model", async () => (await option.count()) === 1);
      assert.equal((await option.innerText()).trim(), `${MODEL} (local, default) — not downloaded`);
      await wb.shot("missing-model", "the configured local model is not pulled: the error says so, with Pull model in the notification and in the view");

      await button.click();
      const ready = `local/${MODEL} is ready. Send your message again to go on.`;
      assert.ok(await wb.notificationShown(ready, 60000), `no notification "${ready}"`);
      await session.locator(".note", { hasText: ready }).waitFor();
      await waitFor("the view's Pull model button to go", async () => (await session.locator(".end button", { hasText: "Pull model" }).count()) === 0);
      await waitFor("the picker to list the model as downloaded", async () =>
        (await option.count()) === 1 && (await option.innerText()).trim() === `${MODEL} (local, default)`,
      );
      await wb.shot("model-ready", "after Pull model: the view says the model is ready (the button is gone; the notification may sit in the notification center only); the picker no longer says not downloaded");

      // The file came from the download host, whole and verified.
      const pulled = fs.readFileSync(path.join(models, `${MODEL}.gguf`));
      assert.ok(pulled.equals(data), "the pulled file differs from the served one");
      assert.ok(fs.existsSync(path.join(models, `${MODEL}.gguf.sha256`)), "no verification stamp");
      assert.match(fs.readFileSync(hostLog, "utf8"), new RegExp(`"GET /${MODEL}\\.gguf HTTP/1\\.1" 200`));
    } catch (error) {
      await page?.screenshot({ path: path.join(ARTIFACTS, "failure.png") }).catch(() => {});
      error.message += `\n\nscreenshot: test-artifacts/vscode/pull-model/failure.png\n${vscode?.diagnostics() ?? ""}\n--- download host\n${tail(hostLog, 20)}`;
      throw error;
    }
  });
});
