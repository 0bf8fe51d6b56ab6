// One VS Code on a copy of examples/inventory, its Cadenza server on the scripted model of
// fake_model.py: the set-up, the clean-up and the failure report the scripted-model test files
// share. A failed step leaves a screenshot and the tails of code-server's and the model's logs.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { PYTHON, REPO, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { startFakeModel } from "./fakemodel.mjs";
import { isolatedEnv, stopGroup, tail } from "./harness.mjs";

/**
 * Start it; screenshots go to test-artifacts/vscode/NAME/.
 *
 * @param {string} name The artifacts folder (and the temporary folder's prefix).
 * @param {object} settings Extra VS Code user settings.
 */
export async function startScripted(name, settings = {}) {
  prerequisites();
  const artifacts = path.join(REPO, "test-artifacts", "vscode", name);
  freshArtifacts(artifacts);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `cadenza-vscode-${name}-`));
  const workspace = path.join(tmp, "inventory");
  fs.cpSync(path.join(REPO, "examples", "inventory"), workspace, { recursive: true });
  const fakeLog = path.join(artifacts, "fake-model.log");
  const home = path.join(tmp, "home");
  const env = isolatedEnv(home);
  const fake = await startFakeModel(env, fakeLog);
  const ctx = { name, artifacts, tmp, workspace, home, fake, fakeLog, vscode: undefined };
  try {
    ctx.vscode = await launchVSCode({
      tmp,
      workspace,
      env,
      artifacts,
      settings: {
        "cadenza.model": "openai/test",
        "cadenza.baseUrl": fake.baseUrl,
        "cadenza.server.command": [PYTHON, "-m", "cadenza"],
        "cadenza.server.env": { OPENAI_API_KEY: "test-key" },
        "cadenza.server.logLevel": "INFO",
        ...settings,
      },
    });
  } catch (error) {
    await stopScripted(ctx);
    throw error;
  }
  return ctx;
}

/** What a failure report adds: code-server's diagnostics and the model's log. */
export function diagnostics(ctx) {
  return `${ctx?.vscode?.diagnostics() ?? ""}\n--- fake model\n${ctx ? tail(ctx.fakeLog, 20) : ""}`;
}

/** Run `body`; when it fails, a screenshot and the logs go with the error. */
export async function step(ctx, name, body) {
  try {
    await body();
  } catch (error) {
    const shot = path.join(ctx.artifacts, `failure-${name}.png`);
    await ctx.vscode?.page?.screenshot({ path: shot }).catch(() => {});
    error.message += `\n\nscreenshot: ${path.relative(REPO, shot)}\n${diagnostics(ctx)}`;
    throw error;
  }
}

/** Write the screenshots' index, stop everything, remove the temporary folder. */
export async function stopScripted(ctx) {
  if (!ctx) return;
  const wb = ctx.vscode?.wb;
  if (wb) {
    const index = wb.shots.map((s) => `${path.basename(s.file)}: ${s.description}`).join("\n");
    fs.writeFileSync(path.join(ctx.artifacts, "screenshots.txt"), `${index}\n`);
  }
  await ctx.vscode?.close();
  await stopGroup(ctx.fake?.child);
  if (!process.env.CADENZA_KEEP_TMP) fs.rmSync(ctx.tmp, { recursive: true, force: true });
}
