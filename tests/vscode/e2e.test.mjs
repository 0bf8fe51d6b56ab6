// The Cadenza extension end to end in real VS Code: code-server 4.100.3 (VS Code 1.100.3) with
// the packaged .vsix installed, driven through headless Debian Chromium by playwright-core,
// against the real `cadenza serve` and a scripted OpenAI-compatible model (fake_model.py).
//
// Each test does what a person does (command palette, input boxes, notification buttons, the
// panel, Ctrl+S) and asserts in the UI, on disk and in what the model was sent. Screenshots of
// each step go to test-artifacts/vscode/. A missing prerequisite fails the run: nothing skips.
//
// Environment: CADENZA_PYTHON (the interpreter with cadenza installed; default REPO/.venv),
// CODE_SERVER (the code-server launcher; default the cache of install-code-server.sh),
// CADENZA_VSIX (default clients/vscode/dist/cadenza.vsix), CHROMIUM (default /usr/bin/chromium).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { PYTHON, REPO, channelLog, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { isolatedEnv, startGroup, stopGroup, tail, waitFor } from "./harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode");

const ORIGINAL = fs.readFileSync(path.join(REPO, "examples", "inventory", "inventory.py"), "utf8");
const TYPED = "def calc_total(items: list[Item]) -> float:";
/** The workspace's settings between tests: edits stay unsaved until the person saves. */
const SAVE_NEVER = { "cadenza.saveEdits": "never" };

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

const script = (...replies) => control("/script", { replies });
const requests = () => control("/requests");
const call = (name, args, id) => ({ tool_calls: [{ name, arguments: args, id }] });

function toolMessages(request) {
  return request.messages.filter((m) => m.role === "tool");
}

/** The user messages of a request, the session's workspace message (where it is, its files) left out. */
function personTexts(request) {
  return request.messages
    .filter((m) => m.role === "user")
    .map((m) => String(m.content))
    .filter((text) => !text.startsWith("The workspace is at "));
}

function userTask(request) {
  return personTexts(request)[0];
}

/**
 * Write the workspace's .vscode/settings.json and wait until the extension saw the change
 * (it logs "settings changed: …" with `expect` in it). The file exists from the start: VS Code
 * picks up a change to it faster than a new folder.
 */
async function setWorkspaceSettings(settings, expect) {
  const before = (channelLog(vscode.userData).match(/settings changed:/g) ?? []).length;
  fs.writeFileSync(path.join(workspace, ".vscode", "settings.json"), JSON.stringify(settings, null, 2));
  await waitFor(`VS Code to apply the workspace settings (${expect})`, () => {
    const changes = channelLog(vscode.userData).split("\n").filter((l) => l.includes("settings changed:"));
    return changes.length > before && changes[changes.length - 1].includes(expect);
  }, { timeoutMs: 60000, intervalMs: 500 });
}

function diagnostics() {
  return `${vscode?.diagnostics() ?? ""}\n--- fake model\n${tail(fakeLog, 20)}`;
}

describe("Cadenza in VS Code (code-server)", { timeout: 900000 }, () => {
  before(async () => {
    const started = Date.now();
    prerequisites();
    freshArtifacts(ARTIFACTS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-"));
    workspace = path.join(tmp, "inventory");
    fs.cpSync(path.join(REPO, "examples", "inventory"), workspace, { recursive: true });
    // Workspace settings change during the tests; VS Code sees a changed file sooner than a new one.
    // The person saves after each edit (user settings, below); this workspace asks for the
    // stricter `never`, which a workspace may (it may not loosen the person's value).
    fs.mkdirSync(path.join(workspace, ".vscode"));
    fs.writeFileSync(path.join(workspace, ".vscode", "settings.json"), JSON.stringify(SAVE_NEVER, null, 2));
    fakeLog = path.join(ARTIFACTS, "fake-model.log");
    const env = isolatedEnv(path.join(tmp, "home"));

    // The scripted model; its first stdout line says where it listens.
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
    console.log(`# set up in ${((Date.now() - started) / 1000).toFixed(1)} s (code-server port ${vscode.port}, workspace ${workspace})`);
  });

  after(async () => {
    if (wb) {
      const index = wb.shots.map((s) => `${path.basename(s.file)}: ${s.description}`).join("\n");
      fs.writeFileSync(path.join(ARTIFACTS, "screenshots.txt"), `${index}\n`);
    }
    await vscode?.close();
    await stopGroup(fake);
    if (tmp && !process.env.CADENZA_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function step(name, body) {
    try {
      await body();
    } catch (error) {
      await page?.screenshot({ path: path.join(ARTIFACTS, `failure-${name}.png`) }).catch(() => {});
      error.message += `\n\nscreenshot: test-artifacts/vscode/failure-${name}.png\n${diagnostics()}`;
      throw error;
    }
  }

  it("runs a task on the selection: progress, the edit in the buffer, saved with Ctrl+S, Open diff", async () =>
    step("run-task", async () => {
      await control("/reset", {});
      await script(
        call("edit_file", { path: "inventory.py", old_string: "def calc_total(items):", new_string: TYPED }, "c1"),
        { content: "Added type hints to calc_total.", delay_s: 4 },
      );
      await wb.openFile("inventory.py");
      await wb.selectLine(13);
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Context: the selected line 13 of inventory.py.");
      await page.keyboard.type("Add type hints to calc_total");
      await wb.shot("run-task-input", "Cadenza: Run Task… from the palette: the input box names the selection sent as context");
      await page.keyboard.press("Enter");

      // The server's work-done progress is a notification with a Cancel button.
      const progress = await wb.waitForToast("Cadenza", 60000);
      assert.ok(await progress.locator(".monaco-button", { hasText: "Cancel" }).count(), "the progress notification has no Cancel button");
      // The edit lands in the editor's buffer (dirty), not on disk.
      await waitFor("the agent's edit in the editor buffer", async () => (await wb.editorText()).includes(TYPED), { timeoutMs: 30000 });
      assert.ok(await wb.activeTabIsDirty(), "the edited buffer is not dirty");
      assert.equal(fs.readFileSync(path.join(workspace, "inventory.py"), "utf8"), ORIGINAL, "the file changed on disk before saving");
      await wb.shot("progress-and-edit", "while the session runs: the progress notification (with Cancel) and the edit in the unsaved buffer");

      // The session ends: the progress notification goes away, the result is announced.
      await wb.waitForToast("Cadenza finished: Added type hints to calc_total.", 60000);
      await waitFor("the progress notification to end", async () =>
        (await wb.toast("Cadenza").filter({ has: page.locator(".monaco-button", { hasText: "Cancel" }) }).count()) === 0,
      );
      const session = wb.panel().locator('section.session[data-stop-reason="end_turn"]');
      await session.waitFor({ timeout: 20000 });
      assert.match(await session.innerText(), /Add type hints to calc_total/);
      await session.locator(".tool.status-completed .diff", { hasText: "inventory.py" }).waitFor();
      await wb.shot("session-done", "the session ended: the result notification and the Cadenza panel (task, tool call, diff, summary)");

      // Saved by the person, as any edit.
      await wb.focusEditor();
      await page.keyboard.press("Control+S");
      await waitFor("inventory.py saved with the agent's edit", () =>
        fs.readFileSync(path.join(workspace, "inventory.py"), "utf8") === ORIGINAL.replace("def calc_total(items):", TYPED),
      );
      await waitFor("the tab to be clean after saving", async () => !(await wb.activeTabIsDirty()));

      // What the model was sent: the task with the selection, then the edit's result.
      const sent = await requests();
      assert.equal(sent.length, 2, `expected 2 model requests, got ${sent.length}`);
      assert.equal(
        userTask(sent[0]),
        "Add type hints to calc_total\n\nSelected line 13 of inventory.py:\n```python\ndef calc_total(items):\n```",
      );
      assert.deepEqual(toolMessages(sent[1]).map((m) => m.content), ["edited inventory.py: 1 replacement(s)"]);

      // "Open diff" in the panel opens VS Code's diff editor.
      await session.locator(".diff button", { hasText: "Open diff" }).click();
      await page.locator(".monaco-diff-editor").first().waitFor({ timeout: 20000 });
      await page.locator(".tab.active", { hasText: "inventory.py" }).waitFor();
      await wb.shot("open-diff", "Open diff from the panel: VS Code's diff editor with the agent's change");
    }));

  it("answers the agent's question in an input box, and saves the edit per cadenza.saveEdits", async () =>
    step("ask-user", async () => {
      await control("/reset", {});
      // code-server does not notice changes to the user settings file; workspace settings it does:
      // without the workspace's stricter `never`, the person's `afterEachEdit` applies.
      await setWorkspaceSettings({}, "saveEdits afterEachEdit");
      await script(
        call("ask_user", { question: "What should the maximum stock per item be?" }, "a1"),
        call(
          "edit_file",
          { path: "inventory.py", old_string: "    item.quantity += amount\n", new_string: "    item.quantity = min(item.quantity + amount, 100)\n" },
          "a2",
        ),
        { content: "restock now caps the stock at 100." },
      );
      await wb.clearNotifications();
      await wb.command("View: Close All Editors");
      await wb.openFile("inventory.py");
      await page.keyboard.press("Control+Home"); // VS Code restored the earlier selection
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Context: the active file inventory.py.");
      await page.keyboard.type("Cap the stock that restock can reach");
      await page.keyboard.press("Enter");

      await wb.waitForQuickInput("What should the maximum stock per item be?", 60000);
      await page.keyboard.type("100");
      await wb.shot("ask-user", "cadenza/askUser: the agent's question as an input box, answered by typing");
      await page.keyboard.press("Enter");

      await wb.waitForToast("Cadenza finished: restock now caps the stock at 100.", 60000);
      const expected = ORIGINAL.replace("def calc_total(items):", TYPED).replace(
        "    item.quantity += amount\n",
        "    item.quantity = min(item.quantity + amount, 100)\n",
      );
      await waitFor("inventory.py saved by the extension (saveEdits: afterEachEdit)", () =>
        fs.readFileSync(path.join(workspace, "inventory.py"), "utf8") === expected,
      );
      assert.ok(!(await wb.activeTabIsDirty()), "the tab is still dirty after saveEdits saved it");
      const sent = await requests();
      assert.equal(userTask(sent[0]), "Cap the stock that restock can reach\n\nActive file: inventory.py (cursor on line 1)");
      assert.deepEqual(toolMessages(sent[1]).map((m) => m.content), ["The person answered: 100"]);
      const session = wb.panel().locator('section.session[data-stop-reason="end_turn"]', { hasText: "Cap the stock" });
      await session.locator(".note", { hasText: "You answered: 100" }).waitFor();
      await wb.shot("ask-user-done", "after the answer: the edit saved, the question and answer in the panel");
      await setWorkspaceSettings(SAVE_NEVER, "saveEdits never");
    }));

  it("needs_user_input: the session waits; the input box answer resumes it, Escape then Answer… replies later", async () =>
    step("needs-input", async () => {
      await control("/reset", {});
      const needs = (missing, why, id) =>
        call("complete", { status: "needs_user_input", summary: "", missing_info: missing, why_no_default: why }, id);
      await script(
        needs("which currency the report should use", "EUR and USD are equally plausible here", "n1"),
        needs("how many decimals to show", "the report shows both 0 and 2 today", "n2"),
        { content: "The report now shows the value in CHF with 2 decimals." },
      );
      await wb.clearNotifications();
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Show the currency in the report");
      await page.keyboard.press("Enter");

      // The session waits and the server asks at once (cadenza/askUser): answered in the box.
      await wb.waitForQuickInput("which currency the report should use (EUR and USD are equally plausible here)", 60000);
      const waiting = wb.panel().locator("section.session.state-waiting", { hasText: "Show the currency in the report" });
      await waiting.waitFor({ timeout: 20000 });
      await wb.shot("needs-input", "needs_user_input: the session waits (panel badge, Reply…) and the server's question in an input box");
      await page.keyboard.type("CHF");
      await page.keyboard.press("Enter");

      // The second question is dismissed: the session keeps waiting; Answer… replies later.
      await wb.waitForQuickInput("how many decimals to show (the report shows both 0 and 2 today)", 60000);
      await page.keyboard.press("Escape");
      const toast = await wb.waitForToast("Cadenza needs your input: how many decimals to show", 30000);
      await waiting.locator("button", { hasText: "Reply…" }).waitFor();
      await wb.shot("needs-input-later", "the question dismissed: the session still waits; Answer… (or the panel's Reply…) answers later");
      await toast.locator(".monaco-button", { hasText: "Answer…" }).click();
      await wb.waitForQuickInput("how many decimals to show (the report shows both 0 and 2 today)");
      await page.keyboard.type("2");
      await page.keyboard.press("Enter");
      const done = wb
        .panel()
        .locator('section.session[data-stop-reason="end_turn"]', { hasText: "Show the currency in the report" })
        .filter({ hasText: "The report now shows the value in CHF with 2 decimals." });
      await done.waitFor({ timeout: 60000 });
      assert.deepEqual(
        // The first line: the message (its Restore action is on the next).
        (await done.locator(".resume").allInnerTexts()).map((t) => t.split("\n")[0]),
        ["You answered: CHF", "You answered: 2"],
      );
      await wb.shot("needs-input-done", "both answers resumed the same session, which ended with end_turn");

      // One conversation: each answer came as a user message after the answered complete call.
      const sent = await requests();
      assert.equal(sent.length, 3, `expected 3 model requests, got ${sent.length}`);
      const lastUser = (request) => request.messages.filter((m) => m.role === "user").at(-1).content;
      assert.equal(userTask(sent[1]), "Show the currency in the report\n\nActive file: inventory.py (cursor on line 1)");
      assert.equal(lastUser(sent[1]), "The person answered your question (which currency the report should use): CHF");
      assert.equal(lastUser(sent[2]), "The person answered your question (how many decimals to show): 2");
    }));

  it("asks before a gated tool in a modal; Allow once runs the command", async () =>
    step("permission", async () => {
      await control("/reset", {});
      await script(call("run_command", { command: "touch marker.txt" }, "p1"), { content: "Made the marker." });
      await wb.clearNotifications();
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Make a marker file");
      await page.keyboard.press("Enter");
      const dialog = page.locator(".monaco-dialog-box", { hasText: "Cadenza wants to run `touch marker.txt`" });
      await dialog.waitFor({ timeout: 60000 });
      assert.match(await dialog.innerText(), /touch marker\.txt/);
      for (const name of ["Allow once", "Always allow", "Reject", "Always reject"]) {
        assert.equal(await dialog.locator(".monaco-button", { hasText: name }).count() > 0, true, `no ${name} button`);
      }
      assert.ok(!fs.existsSync(path.join(workspace, "marker.txt")), "the command ran before the answer");
      await wb.shot("permission", "cadenza/requestPermission: the modal before run_command, with the command and the four options");
      await dialog.locator(".monaco-button", { hasText: "Allow once" }).click();
      await wb.waitForToast("Cadenza finished: Made the marker.", 60000);
      assert.ok(fs.existsSync(path.join(workspace, "marker.txt")), "marker.txt was not created");
      const [tool] = toolMessages((await requests())[1]);
      assert.match(tool.content, /^exit code 0/);
      await wb.panel().locator(".note", { hasText: "Cadenza wants to run `touch marker.txt`: Allow once" }).waitFor();
      // What the command changed (marker.txt, created) is in the turn's review like an edit.
      const review = wb.panel().locator("section.session", { hasText: "Make a marker file" }).locator(".review");
      await review.locator(".review-head", { hasText: "1 change in 1 file to review" }).waitFor({ timeout: 20000 });
      await review.locator(".review-file", { hasText: "marker.txt" }).waitFor();
      assert.equal(await review.locator(".review-unlisted").count(), 0, "a note on unlisted changes");
      await wb.shot("permission-review", "after the command: the file it created is listed for review with Keep / Undo");
      fs.rmSync(path.join(workspace, "marker.txt"));
    }));

  it("cancels a running session with the progress notification's Cancel button", async () =>
    step("cancel-notification", async () => {
      await control("/reset", {});
      await script({ content: "too late", delay_s: 120 });
      await wb.clearNotifications();
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Rewrite report.py");
      await page.keyboard.press("Enter");
      const progress = await wb.waitForToast("Cadenza", 60000);
      await waitFor("the model request", async () => (await requests()).length === 1);
      await wb.shot("cancel-running", "a running session: its progress notification with the Cancel button");
      await progress.locator(".monaco-button", { hasText: "Cancel" }).click();
      await wb.waitForToast("Cadenza: the task was cancelled.", 30000);
      await wb.panel().locator('section.session[data-stop-reason="cancelled"]', { hasText: "Rewrite report.py" }).waitFor();
      await wb.shot("cancelled", "after Cancel: the session ended with stopReason cancelled");
      assert.equal((await requests()).length, 1);
    }));

  it("cancels with Cadenza: Cancel from the palette", async () =>
    step("cancel-palette", async () => {
      await control("/reset", {});
      await script({ content: "too late", delay_s: 120 });
      await wb.clearNotifications();
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Summarize report.py");
      await page.keyboard.press("Enter");
      await wb.waitForToast("Cadenza", 60000);
      await waitFor("the model request", async () => (await requests()).length === 1);
      await wb.command("Cadenza: Cancel");
      await wb.waitForToast("Cadenza: the task was cancelled.", 30000);
      await wb.panel().locator('section.session[data-stop-reason="cancelled"]', { hasText: "Summarize report.py" }).waitFor();
    }));

  it("undoes the latest session's edit with Cadenza: Undo Session", async () =>
    step("undo", async () => {
      await wb.clearNotifications();
      await wb.openFile("inventory.py");
      await wb.command("Cadenza: Undo Session");
      await wb.waitForQuickInput("Undo which session's edits?");
      const rows = await wb.quickInput().locator(".quick-input-list .monaco-list-row").allInnerTexts();
      // Newest first; the marker session changed a file too (its command created marker.txt).
      assert.match(rows[0] ?? "", /Make a marker file/, `the newest session that changed files comes first: ${rows}`);
      assert.match(rows[1] ?? "", /Cap the stock/, `the session before it: ${rows}`);
      await wb.shot("undo-pick", "Cadenza: Undo Session: the sessions of this window that changed files, newest first");
      await wb.answerQuickInput("Cap the stock");
      await wb.waitForToast("Cadenza: undid the session: restored inventory.py.", 30000);
      const typedOnly = ORIGINAL.replace("def calc_total(items):", TYPED);
      await waitFor("the undo in the editor buffer", async () => {
        const text = await wb.editorText();
        return text.includes("item.quantity += amount") && !text.includes("min(item.quantity");
      });
      await wb.shot("undone", "after Undo Session: the restock change is gone from the buffer (unsaved), the panel notes the undo");
      await wb.focusEditor();
      await page.keyboard.press("Control+S");
      await waitFor("inventory.py saved after the undo", () => fs.readFileSync(path.join(workspace, "inventory.py"), "utf8") === typedOnly);
    }));

  it("Show Sessions lists the server's sessions; picking one replays it into the panel", async () =>
    step("sessions", async () => {
      await control("/reset", {});
      await wb.clearNotifications();
      await wb.command("Cadenza: Show Sessions");
      await wb.waitForQuickInput("Pick a session to show its history in the panel", 30000);
      const rows = await wb.quickInput().locator(".quick-input-list .monaco-list-row").allInnerTexts();
      assert.ok(rows.some((r) => r.includes("Add type hints to calc_total")), `sessions listed: ${rows}`);
      await wb.shot("sessions", "Cadenza: Show Sessions: the server's sessions (cadenza.listSessions), newest first");
      await wb.answerQuickInput("Show the currency");
      const session = wb.panel().locator('section.session[data-stop-reason="end_turn"]', { hasText: "Show the currency in the report" });
      await session.locator(".user-text", { hasText: "Show the currency in the report" }).waitFor({ timeout: 30000 });
      await waitFor("the replay's two resumes", async () => (await session.locator(".resume").count()) === 2);
      // The person's answers as they wrote them, not the server's wording around them.
      assert.deepEqual(
        (await session.locator(".resume").allInnerTexts()).map((t) => t.split("\n")[0]),
        ["You answered: CHF", "You answered: 2"],
      );
      assert.ok(!(await session.innerText()).includes("The person answered your question"), "the replay shows internal prompt text");
      await session.locator(".end").last().scrollIntoViewIfNeeded();
      await wb.shot("sessions-replayed", "the picked session replayed by cadenza.loadSession: the person's messages, the agent's, the ends");
      assert.equal((await requests()).length, 0, "the replay asked the model nothing");
      assert.ok(!(await wb.toastTexts()).some((t) => t.includes("Cadenza finished")), "the replay announced an end");
    }));

  it("review mode: each change waits in VS Code's refactor preview; Apply applies, Discard refuses", async () =>
    step("review", async () => {
      await control("/reset", {});
      await setWorkspaceSettings({ ...SAVE_NEVER, "cadenza.reviewMode": true }, "reviewMode true");
      await script(
        call("edit_file", { path: "report.py", old_string: '{calc_total(items):.2f}"', new_string: '{calc_total(items):.2f} EUR"' }, "r1"),
        call("edit_file", { path: "inventory.py", old_string: '"""A tiny inventory', new_string: '"""A small inventory' }, "r2"),
        { content: "Report in euros; the docstring change was discarded." },
      );
      await wb.clearNotifications();
      await wb.command("View: Close All Editors");
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Show the stock value in euros");
      await page.keyboard.press("Enter");

      const apply = page.locator(".monaco-button", { hasText: /^Apply$/ }).first();
      await apply.waitFor({ timeout: 60000 });
      // VS Code lists a change that needs confirmation unchecked: the person ticks it, then Apply.
      const fileRow = page.locator(".monaco-list-row", { hasText: "report.py" }).filter({ has: page.locator("input.edit-checkbox") }).first();
      await fileRow.waitFor();
      await fileRow.locator("input.edit-checkbox").first().check();
      await wb.shot("review-preview", "review mode: the agent's change to report.py in VS Code's Refactor Preview, ticked, before Apply");
      await apply.click();
      const discard = page.locator(".monaco-button", { hasText: /^Discard$/ }).first();
      await waitFor("the second change in the refactor preview", async () => {
        const sent = await requests();
        return sent.length >= 2 && (await discard.isVisible());
      }, { timeoutMs: 60000 });
      await discard.click();
      await wb.waitForToast("Cadenza finished: Report in euros", 60000);
      const sent = await requests();
      const results = toolMessages(sent[2]).map((m) => m.content);
      assert.equal(results[0], "edited report.py: 1 replacement(s)");
      assert.match(results[1], /discarded the change in the review preview/, `the refused edit's result: ${results[1]}`);
      await wb.openFile("report.py");
      assert.match(await wb.editorText(), /:\.2f\} EUR"\)/);
      await wb.openFile("inventory.py");
      assert.match(await wb.editorText(), /A tiny inventory/);
      await wb.shot("review-done", "after Apply then Discard: report.py changed (unsaved), inventory.py untouched");
      await setWorkspaceSettings(SAVE_NEVER, "reviewMode false");
      await wb.command("File: Revert File");
      await wb.openFile("report.py");
      await wb.command("File: Revert File");
    }));

  it("restarts the server and runs a task on the new one", async () =>
    step("restart", async () => {
      await control("/reset", {});
      await script({ content: "Hello from the restarted server." });
      await wb.clearNotifications();
      await wb.command("Cadenza: Restart Server");
      await wb.waitForToast("Cadenza: the server restarted.", 60000);
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Say hello");
      await page.keyboard.press("Enter");
      await wb.waitForToast("Cadenza finished: Hello from the restarted server.", 60000);
      await wb.shot("after-restart", "after Cadenza: Restart Server, a new session on the new server");
    }));

  it("renders the model's Markdown in the side bar view, HTML in it inert; usage per turn; a 401 as one sentence", async () =>
    step("markdown", async () => {
      await control("/reset", {});
      const reply = [
        "## Summary",
        "",
        "Renamed **calc_total** and added `typing` hints:",
        "",
        "- inventory.py",
        "- report.py",
        "",
        "```python",
        "def calc_total(items: list[Item]) -> float:",
        "```",
        "",
        '<script>document.body.dataset.pwned = "script"</script>',
        '<img src="x" onerror="document.body.dataset.pwned = \'img\'">',
        "[a link](javascript:document.body.dataset.pwned='link')",
      ].join("\n");
      await script({ content: reply });
      await wb.clearNotifications();
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Summarize the change in Markdown");
      await page.keyboard.press("Enter");
      const session = wb.panel().locator('section.session[data-stop-reason="end_turn"]', { hasText: "Summarize the change in Markdown" });
      await session.waitFor({ timeout: 60000 });
      // The view lives in the side bar (its container in the activity bar), not the bottom panel.
      // (Webview iframes live in an overlay outside the parts: look at the containers instead.)
      assert.ok(
        (await page.locator(".part.activitybar .action-item .action-label[aria-label^='Cadenza']").count()) > 0,
        "no Cadenza icon in the activity bar",
      );
      assert.ok(
        (await page.locator(".part.sidebar .composite.title", { hasText: /cadenza/i }).count()) > 0,
        "the side bar does not show the Cadenza view",
      );
      const text = session.locator(".agent-text.markdown");
      await text.locator("h2", { hasText: "Summary" }).waitFor();
      assert.equal(await text.locator("strong").innerText(), "calc_total");
      assert.deepEqual(await text.locator("li").allInnerTexts(), ["inventory.py", "report.py"]);
      assert.match(await text.locator("pre code").innerText(), /def calc_total\(items: list\[Item\]\) -> float:/);
      // The HTML the model wrote is text, nothing of it runs.
      const shown = await text.innerText();
      assert.ok(shown.includes('<script>document.body.dataset.pwned = "script"</script>'), `the script tag is not shown as text: ${shown}`);
      assert.ok(shown.includes('<img src="x" onerror='), `the img tag is not shown as text: ${shown}`);
      assert.equal(await session.locator("script, img, iframe, [onerror], a[href^='javascript']").count(), 0, "model HTML became elements");
      assert.equal(await wb.panel().locator("body[data-pwned]").count(), 0, "model HTML ran in the webview");
      // The webview's scripts: the panel's bundle and VS Code's own, none from the reply.
      const scripts = await wb.panel().locator("script").evaluateAll((nodes) => nodes.map((n) => n.src || n.textContent));
      assert.ok(scripts.some((src) => /dist\/webview\.js/.test(src)), `the panel's script is missing: ${scripts}`);
      assert.ok(!scripts.some((src) => src.includes("pwned")), `the reply's script is in the webview: ${scripts}`);
      // The final message is the streamed text: shown once.
      assert.equal(await session.locator("h2", { hasText: "Summary" }).count(), 1, "the final message is shown twice");
      // Usage of the turn (the scripted model reports 10 prompt and 5 completion tokens; the
      // server's context window is the default 8192).
      assert.equal(await session.locator(".end .usage").innerText(), "context 10 / 8k tokens (<1%) · 5 tokens out · 1 request");
      // The finish notification sums the reply up in one line of plain text, not Markdown source.
      const finished = await wb.waitForToast("Cadenza finished: Renamed calc_total and added typing hints…", 30000);
      assert.ok(!/\*\*|##|<script/.test(await finished.innerText()), "Markdown or HTML source in the finish notification");
      await session.scrollIntoViewIfNeeded();
      await wb.shot("markdown", "the Cadenza view in the side bar: the reply rendered as Markdown, its <script>/<img onerror> shown as inert text, the turn's usage");

      // A provider error: one sentence with the fix, the server's text behind "what the server said".
      await control("/reset", {});
      await script({ status: 401 });
      await wb.clearNotifications();
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Fail with a 401");
      await page.keyboard.press("Enter");
      const toast = await wb.waitForToast("The openai provider refused the API key (HTTP 401)", 60000);
      const toastText = await toast.innerText();
      assert.ok(toastText.includes("set OPENAI_API_KEY"), `the toast names no fix: ${toastText}`);
      assert.ok(!toastText.includes("{"), `the toast shows raw JSON: ${toastText}`);
      const failed = wb.panel().locator('section.session[data-stop-reason="error"]', { hasText: "Fail with a 401" });
      await failed.locator(".end-message", { hasText: "refused the API key" }).waitFor({ timeout: 20000 });
      assert.equal(await failed.locator(".end details.error-details").count(), 1, "no details with the server's text");
      await wb.shot("provider-401", "a provider 401: one sentence with the fix in the toast and the panel, the raw text folded away");
    }));

  it("the view's input runs a task (Enter) and recalls it (Up)", async () =>
    step("panel-input", async () => {
      await control("/reset", {});
      await script({ content: "Ran from the **panel**." });
      await wb.clearNotifications();
      const input = wb.panel().locator("textarea#prompt");
      await input.click();
      await page.keyboard.type("Say where you were started");
      await page.keyboard.press("Enter");
      const session = wb.panel().locator('section.session[data-stop-reason="end_turn"]', { hasText: "Say where you were started" });
      await session.locator(".agent-text strong", { hasText: "panel" }).waitFor({ timeout: 60000 });
      // The person looks at the panel they typed in: its end needs no toast.
      assert.ok(!(await wb.toastTexts()).some((t) => t.includes("Ran from the panel")), "a toast for a turn ended in the visible panel");
      assert.equal(await input.inputValue(), "", "the input was not cleared");
      // The server advertises cadenza.promptSession, so the input continues the newest ended
      // session: the request holds that session's earlier turn, then the typed prompt.
      const sent = await requests();
      const users = personTexts(sent[0]);
      assert.match(users[users.length - 1], /^Say where you were started/);
      assert.ok(users.length > 1, `the input started a new session instead of a follow-up: ${JSON.stringify(users)}`);
      await input.click();
      await page.keyboard.press("ArrowUp");
      assert.equal(await input.inputValue(), "Say where you were started", "Up does not recall the last prompt");
      await wb.shot("panel-input", "the input at the bottom of the Cadenza view: a task sent with Enter, recalled with Up");
    }));

  it("lists what a command changed for review; Undo puts a file back, the next turn is told, the rest is named", async () =>
    step("command-review", async () => {
      await control("/reset", {});
      const notes = path.join(workspace, "notes.txt");
      fs.writeFileSync(notes, "a\nb\n");
      const command = "sed -i 's/^b$/B/' notes.txt && printf 'new\\n' > made.txt && printf 'x\\000y' > data.bin";
      await script(call("run_command", { command }, "k1"), { content: "Changed the notes, made two files." }, { content: "Understood." });
      await wb.clearNotifications();
      await wb.command("Cadenza: Run Task…");
      await wb.waitForQuickInput("Cadenza: Run Task");
      await page.keyboard.type("Tidy the notes with a command");
      await page.keyboard.press("Enter");
      const dialog = page.locator(".monaco-dialog-box", { hasText: "Cadenza wants to run" });
      await dialog.waitFor({ timeout: 60000 });
      await dialog.locator(".monaco-button", { hasText: "Allow once" }).click();
      const session = wb.panel().locator("section.session", { hasText: "Tidy the notes with a command" });
      const review = session.locator(".review");
      await review.locator(".review-head", { hasText: "2 changes in 2 files to review" }).waitFor({ timeout: 60000 });
      assert.equal(fs.readFileSync(notes, "utf8"), "a\nB\n");
      // The binary file cannot be listed: the review names it and says why.
      await review.locator(".review-unlisted", { hasText: "not text, over 1 MB or a link (data.bin)" }).waitFor();
      await wb.shot("command-review", "a command's changes in the review: notes.txt modified, made.txt created, data.bin named as not listed");
      await review.locator('[title="Undo the changes in notes.txt"]').click();
      await review.locator(".review-head", { hasText: "1 change in 1 file to review (1 undone)" }).waitFor({ timeout: 20000 });
      // The undo lands in notes.txt's buffer (unsaved, as every edit): save it there.
      await wb.openFile("notes.txt");
      await waitFor("the undo in notes.txt's buffer", async () => (await wb.editorText()).includes("b") && !(await wb.editorText()).includes("B"));
      await wb.focusEditor();
      await page.keyboard.press("Control+S");
      await waitFor("notes.txt back on disk", () => fs.readFileSync(notes, "utf8") === "a\nb\n");
      assert.equal(fs.readFileSync(path.join(workspace, "made.txt"), "utf8"), "new\n", "the other change was undone too");
      await wb.shot("command-review-undone", "Undo on notes.txt: back as before the command; made.txt still to review");
      // The follow-up's request starts with what the person undid.
      const input = wb.panel().locator("textarea#prompt");
      await input.fill(""); // the step before left a recalled prompt in it
      await input.click();
      await page.keyboard.type("Why the notes?");
      await page.keyboard.press("Enter");
      // Requests: the command call, the turn's answer, then the follow-up.
      await waitFor("the follow-up's request", async () => (await requests()).length === 3);
      const users = personTexts((await requests())[2]);
      const told = users[users.length - 1];
      assert.match(told, /^The person undid these changes you made in the previous turn/);
      assert.match(told, /notes\.txt, line 2/);
      assert.ok(!told.includes("made.txt"), `the kept change was named: ${told}`);
      for (const name of ["notes.txt", "made.txt", "data.bin"]) fs.rmSync(path.join(workspace, name), { force: true });
    }));
});
