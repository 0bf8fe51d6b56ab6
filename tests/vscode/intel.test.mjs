// Code intelligence from VS Code's own language servers, end to end: code-server 4.100.3 with
// the packaged .vsix, its built-in TypeScript language features as the real language server,
// the real `cadenza serve`, and a scripted model (fake_model.py) that calls rename_symbol,
// find_references, go_to_definition and diagnostics. The server asks the extension (cadenza/rename,
// cadenza/references, cadenza/definition, cadenza/diagnostics); the extension asks VS Code
// (vscode.executeDocumentRenameProvider, executeReferenceProvider, executeDefinitionProvider,
// languages.getDiagnostics).
//
// Asserted: the rename of a function used in three files changes all three (in the editor,
// saved per cadenza.saveEdits), the references the model was sent name the three files, and
// the diagnostics it was sent carry the TypeScript error of broken.ts.
//
// Environment: as e2e.test.mjs (CADENZA_PYTHON, CODE_SERVER, CADENZA_VSIX, CHROMIUM).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { PYTHON, REPO, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { isolatedEnv, startGroup, stopGroup, tail, waitFor } from "./harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode-intel");

// Non-ASCII text before the symbol on its line: UTF-16 columns differ from code points.
const FILES = {
  "total.ts": "export function calcTotal(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0);\n}\n",
  "report.ts": 'import { calcTotal } from "./total";\n\nconsole.log("Σ 😀", calcTotal([1, 2]));\n',
  "shop.ts": 'import { calcTotal } from "./total";\n\nexport const PRICE = { "€": calcTotal([3]) };\n',
  "broken.ts": 'export const count: number = "many";\n',
  "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["*.ts"]}\n',
};

let tmp, workspace, fake, fakeUrls, vscode, page, wb, fakeLog;

async function control(pathname, body) {
  const response = await fetch(`${fakeUrls.control}${pathname}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.equal(response.status, 200, `fake model ${pathname}: HTTP ${response.status}`);
  return response.json();
}

const call = (name, args, id) => ({ tool_calls: [{ name, arguments: args, id }] });
const read = (name) => fs.readFileSync(path.join(workspace, name), "utf8");

/** The content of the tool message answering call `id`. */
function toolResult(requests, id) {
  for (const request of requests) {
    const message = request.messages.find((m) => m.role === "tool" && m.tool_call_id === id);
    if (message) return String(message.content);
  }
  throw new Error(`no tool result for ${id}`);
}

describe("code intelligence from VS Code's language servers", { timeout: 600000 }, () => {
  before(async () => {
    prerequisites();
    freshArtifacts(ARTIFACTS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-intel-"));
    workspace = path.join(tmp, "shop");
    fs.mkdirSync(workspace);
    for (const [name, text] of Object.entries(FILES)) fs.writeFileSync(path.join(workspace, name), text);
    fakeLog = path.join(ARTIFACTS, "fake-model.log");
    const env = isolatedEnv(path.join(tmp, "home"));
    fake = startGroup(PYTHON, [path.join(HERE, "fake_model.py")], { env, cwd: REPO, logFile: fakeLog, stdin: "pipe" });
    fakeUrls = await waitFor("the fake model's addresses", () =>
      new Promise((resolve, reject) => {
        fake.stdout.once("data", (data) => resolve(JSON.parse(String(data).split("\n")[0])));
        fake.once("exit", (code) => reject(new Error(`fake_model.py exited with ${code}: ${tail(fakeLog)}`)));
      }),
    { timeoutMs: 30000 });
    vscode = await launchVSCode({
      tmp,
      workspace,
      env,
      artifacts: ARTIFACTS,
      settings: {
        "cadenza.model": "openai/test",
        "cadenza.baseUrl": fakeUrls.baseUrl,
        "cadenza.server.command": [PYTHON, "-m", "cadenza"],
        "cadenza.server.env": { OPENAI_API_KEY: "test-key" },
        "cadenza.server.logLevel": "INFO",
        "cadenza.saveEdits": "afterEachEdit",
      },
    });
    ({ page, wb } = vscode);
  });

  after(async () => {
    await vscode?.close();
    await stopGroup(fake);
    if (tmp && !process.env.CADENZA_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("rename_symbol renames in three files, find_references finds them, go_to_definition, diagnostics shows the TS error", async () => {
    try {
      await control("/script", {
        replies: [
          call("rename_symbol", { path: "total.ts", line: 1, symbol: "calcTotal", new_name: "computeTotal" }, "r1"),
          call("find_references", { path: "report.ts", line: 3, symbol: "computeTotal" }, "f1"),
          call("go_to_definition", { path: "shop.ts", line: 3, symbol: "computeTotal" }, "g1"),
          call("diagnostics", { path: "broken.ts" }, "d1"),
          { content: "Renamed calcTotal to computeTotal." },
        ],
      });
      // The TypeScript server starts with the first .ts editor; the rename waits for its project.
      await wb.openFile("total.ts");
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Context: the active file total.ts.");
      await page.keyboard.type("Rename calcTotal to computeTotal everywhere");
      await page.keyboard.press("Enter");
      await wb.waitForToast("Cadenza finished: Renamed calcTotal to computeTotal.", 120000);
      await wb.shot("intel-done", "after rename_symbol, find_references and diagnostics through VS Code's TypeScript");

      for (const name of ["total.ts", "report.ts", "shop.ts"]) {
        await waitFor(`${name} renamed and saved`, () => read(name) === FILES[name].replaceAll("calcTotal", "computeTotal"));
      }
      const sent = await control("/requests");
      const references = toolResult(sent, "f1");
      for (const name of ["total.ts", "report.ts", "shop.ts"]) assert.match(references, new RegExp(name.replace(".", "\\.")));
      assert.doesNotMatch(references, /calcTotal/);
      const definition = toolResult(sent, "g1");
      assert.match(definition, /total\.ts:1/);
      assert.doesNotMatch(definition, /shop\.ts/);
      const diagnostics = toolResult(sent, "d1");
      assert.match(diagnostics, /broken\.ts/);
      assert.match(diagnostics, /not assignable to type 'number'/);
    } catch (error) {
      await page?.screenshot({ path: path.join(ARTIFACTS, "failure-intel.png") }).catch(() => {});
      error.message += `\n\n${vscode?.diagnostics() ?? ""}\n--- fake model\n${tail(fakeLog, 20)}`;
      throw error;
    }
  });
});
