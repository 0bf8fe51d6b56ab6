// The Cadenza view as a conversation, end to end in real VS Code (code-server + headless
// Chromium, the packaged .vsix, the real `cadenza serve`, the scripted model of fake_model.py):
// follow-ups in one session (the model sees the earlier turns), an @file mention chosen from
// the completion list (the file's text reaches the model), a model switch between turns (the
// model server sees the new name), usage per turn, and the review of a turn's changes: Keep one
// hunk and Undo another in the editor (CodeLens), the next request says which was undone.
// Screenshots go to test-artifacts/vscode/conversation/.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { REPO, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { call, startFakeModel, texts } from "./fakemodel.mjs";
import { isolatedEnv, stopGroup, tail, waitFor } from "./harness.mjs";

const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode", "conversation");

let tmp, workspace, fake, vscode, page, wb, fakeLog;

function diagnostics() {
  return `${vscode?.diagnostics() ?? ""}\n--- fake model\n${tail(fakeLog, 20)}`;
}

describe("a conversation in the Cadenza view (code-server)", { timeout: 600000 }, () => {
  before(async () => {
    const started = Date.now();
    prerequisites();
    freshArtifacts(ARTIFACTS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-chat-"));
    workspace = path.join(tmp, "inventory");
    fs.cpSync(path.join(REPO, "examples", "inventory"), workspace, { recursive: true });
    // The default `cadenza.saveEdits: never`: the turn's edits stay unsaved in the buffer,
    // which VS Code reports (didOpen/didChange) only after answering each applyEdit.
    fakeLog = path.join(ARTIFACTS, "fake-model.log");
    const env = isolatedEnv(path.join(tmp, "home"));
    fake = await startFakeModel(env, fakeLog);
    vscode = await launchVSCode({
      tmp,
      workspace,
      env,
      artifacts: ARTIFACTS,
      settings: {
        "cadenza.model": "openai/test",
        "cadenza.baseUrl": fake.baseUrl,
        "cadenza.server.command": [process.env.CADENZA_PYTHON || path.join(REPO, ".venv", "bin", "python"), "-m", "cadenza"],
        "cadenza.server.env": { OPENAI_API_KEY: "test-key" },
        "cadenza.server.logLevel": "INFO",
      },
    });
    ({ page, wb } = vscode);
    console.log(`# set up in ${((Date.now() - started) / 1000).toFixed(1)} s (code-server port ${vscode.port})`);
  });

  after(async () => {
    if (wb) {
      const index = wb.shots.map((s) => `${path.basename(s.file)}: ${s.description}`).join("\n");
      fs.writeFileSync(path.join(ARTIFACTS, "screenshots.txt"), `${index}\n`);
    }
    await vscode?.close();
    await stopGroup(fake?.child);
    if (tmp && !process.env.CADENZA_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function step(name, body) {
    try {
      await body();
    } catch (error) {
      await page?.screenshot({ path: path.join(ARTIFACTS, `failure-${name}.png`) }).catch(() => {});
      error.message += `\n\nscreenshot: test-artifacts/vscode/conversation/failure-${name}.png\n${diagnostics()}`;
      throw error;
    }
  }

  /** The Cadenza view, from its icon in the activity bar (a click on an open one would close it). */
  async function openView() {
    if (await wb.panel().locator("button#new-session").isVisible().catch(() => false)) return;
    await page.locator(".part.activitybar .action-item .action-label[aria-label^='Cadenza']").first().click();
    await wb.panel().locator("button#new-session").waitFor({ timeout: 30000 });
  }

  /** Type a message into the view's input and send it with Enter. */
  async function send(text) {
    const input = wb.panel().locator("textarea#prompt");
    await input.click();
    await page.keyboard.type(text);
    await page.keyboard.press("Enter");
  }

  /** The newest turn's end in the current conversation, once it shows `text`. */
  async function turnEnded(count) {
    const session = wb.panel().locator("section.session.current");
    await waitFor(`turn ${count} to end`, async () => (await session.locator(".end").count()) === count && (await session.getAttribute("class")).includes("state-ended"), {
      timeoutMs: 60000,
    });
    return session;
  }

  it("three turns in one session; an @file mention; a model switch; usage per turn", async () =>
    step("conversation", async () => {
      await fake.reset();
      await fake.script(
        { content: "Noted: the code word is **PELICAN**." },
        { content: "You asked me to remember PELICAN; `calc_total` sums price times quantity." },
        { content: "Summary: PELICAN, then calc_total." },
      );
      await wb.openFile("report.py");
      await openView();
      await wb.panel().locator("button#new-session").click();
      await wb.panel().locator("#target", { hasText: "The next message starts a new session." }).waitFor();
      await send("Remember the code word PELICAN");
      let session = await turnEnded(1);
      await session.locator(".agent-text strong", { hasText: "PELICAN" }).waitFor();

      // Turn 2 refers to turn 1 and mentions a file chosen from the @ completion.
      const input = wb.panel().locator("textarea#prompt");
      await input.click();
      await page.keyboard.type("Which word did I ask you to remember, and what does ");
      await page.keyboard.type("@inven");
      const row = wb.panel().locator(".completion .completion-item", { hasText: "inventory.py" }).first();
      await row.waitFor({ timeout: 20000 });
      await wb.shot("mention-completion", "typing @inven in the view's input: the completion lists the workspace file (and @selection, @problems)");
      await page.keyboard.press("Enter");
      await wb.panel().locator("#chips .chip", { hasText: "@inventory.py" }).waitFor();
      assert.equal(await input.inputValue(), "Which word did I ask you to remember, and what does @inventory.py ");
      await page.keyboard.type("compute?");
      await wb.shot("mention-chip", "the mention chosen: @inventory.py in the text and as a chip above the input");
      await page.keyboard.press("Enter");
      session = await turnEnded(2);
      await session.locator(".user-text.prompt .chip", { hasText: "@inventory.py" }).waitFor();

      // "/" at the start lists the server's commands (its workflows among them).
      await input.click();
      await page.keyboard.type("/plan");
      await wb.panel().locator(".completion .completion-item", { hasText: "/plan-implement-review" }).waitFor({ timeout: 20000 });
      await wb.shot("slash-completion", "typing /plan in the view's input: the server's commands (cadenza.listCommands)");
      await page.keyboard.press("Escape");
      await input.fill("");

      // Turn 3 with another model, picked in the view.
      await wb.panel().locator("select#model").selectOption("other");
      await wb.waitForQuickInput("PROVIDER/MODEL");
      await wb.answerQuickInput("openai/test-two");
      await waitFor("the picker to show the new model", async () => (await wb.panel().locator("select#model").inputValue()) === "openai/test-two");
      await send("Summarize our conversation in one line");
      session = await turnEnded(3);
      await session.locator(".note", { hasText: "Next turn: model openai/test-two." }).waitFor();

      const sent = await fake.requests();
      assert.equal(sent.length, 3, `expected 3 model requests, got ${sent.length}`);
      // Turn 2's request holds turn 1 (the person's words and the reply) and the mentioned file.
      const users2 = texts(sent[1], "user");
      assert.ok(users2.some((t) => t.startsWith("Remember the code word PELICAN")), `turn 1 missing from turn 2: ${JSON.stringify(users2)}`);
      assert.ok(texts(sent[1], "assistant").some((t) => t.includes("PELICAN")), "the first reply is missing from turn 2");
      const last2 = users2.at(-1);
      assert.match(last2, /^Which word did I ask you to remember, and what does @inventory\.py compute\?/);
      assert.ok(last2.includes("def calc_total(items):"), `the mentioned file did not reach the model: ${last2}`);
      // Turn 3: the new model, and the whole conversation.
      assert.deepEqual(sent.map((r) => r.model), ["test", "test", "test-two"]);
      assert.ok(texts(sent[2], "user").some((t) => t.startsWith("Remember the code word PELICAN")), "turn 1 missing from turn 3");

      // The thread: the follow-ups as the person's messages (not "answers"), usage per turn.
      assert.deepEqual(
        (await session.locator(".user-text.prompt").allInnerTexts()).map((t) => t.split("\n")[0]),
        ["You: Which word did I ask you to remember, and what does @inventory.py compute?", "You: Summarize our conversation in one line"],
      );
      assert.equal(await session.locator(".resume").count(), 0, "a follow-up shown as an answer");
      const usage = await session.locator(".end .usage").allInnerTexts();
      assert.equal(usage.length, 3, `usage per turn: ${usage}`);
      for (const line of usage) assert.match(line, /context \d+ \/ \d+k tokens \(<?\d+%\) · \d+ tokens out · 1 request/);
      await session.locator(".end").last().scrollIntoViewIfNeeded();
      await wb.shot("three-turns", "three turns in one session: the follow-ups, the @inventory.py chip, the model switch note, usage per turn");
    }));

  it("a new session's first message sends its @file mention as context, not in the task", async () =>
    step("first-mention", async () => {
      await fake.reset();
      await fake.script({ content: "It sums price times quantity." });
      await openView();
      await wb.panel().locator("button#new-session").click();
      await wb.panel().locator("#target", { hasText: "The next message starts a new session." }).waitFor();
      const input = wb.panel().locator("textarea#prompt");
      await input.click();
      await page.keyboard.type("Explain ");
      await page.keyboard.type("@inven");
      await wb.panel().locator(".completion .completion-item", { hasText: "inventory.py" }).first().waitFor({ timeout: 20000 });
      await page.keyboard.press("Enter");
      await wb.panel().locator("#chips .chip", { hasText: "@inventory.py" }).waitFor();
      await page.keyboard.press("Enter");
      const session = await turnEnded(1);
      await session.locator(".session-head .chip", { hasText: "@inventory.py" }).waitFor();
      assert.equal((await session.locator(".session-head .task").innerText()).trim(), "Explain @inventory.py");
      await wb.shot("first-mention", "a new session whose first message mentions @inventory.py: the task as typed, the mention as a chip");

      const sent = await fake.requests();
      assert.equal(sent.length, 1, `expected 1 model request, got ${sent.length}`);
      const task = texts(sent[0], "user").at(-1);
      // The server read the file (startSession's context): its text follows the task.
      assert.match(task, /^Explain @inventory\.py\n\nContext from the editor:/);
      assert.ok(task.includes("def calc_total(items):"), `the mentioned file did not reach the model: ${task}`);
      assert.ok(!task.includes("Files to look at"), `the mention was pasted into the task: ${task}`);
    }));

  it("reviews a two-hunk edit: Keep one hunk, Undo the other (CodeLens); the next turn is told", async () =>
    step("review", async () => {
      await fake.reset();
      await fake.script(
        call("edit_file", { path: "inventory.py", old_string: '"""Total value of the items in stock."""', new_string: '"""The stock value: price times quantity, summed."""' }, "e1"),
        call("edit_file", { path: "inventory.py", old_string: '"""Add `amount` units to an item."""', new_string: '"""Add `amount` units to an item (no upper bound)."""' }, "e2"),
        { content: "Reworded two docstrings." },
        { content: "Understood." },
      );
      await openView();
      await wb.panel().locator("button#new-session").click();
      await send("Reword the docstrings of calc_total and restock");
      const session = await turnEnded(1);
      const results = (await fake.requests()).flatMap((r) => r.messages.filter((m) => m.role === "tool").map((m) => m.content));
      assert.deepEqual([...new Set(results)], ["edited inventory.py: 1 replacement(s)"], "the scripted edits did not both apply");
      const review = session.locator(".review");
      await review.locator(".review-head", { hasText: "2 changes in 1 file to review" }).waitFor({ timeout: 20000 });
      await wb.openFile("inventory.py");
      const lenses = page.locator(".editor-group-container.active .contentWidgets .codelens-decoration, .editor-group-container.active .codelens-decoration");
      await waitFor("the Keep/Undo CodeLenses", async () => (await lenses.filter({ hasText: "Undo" }).count()) >= 2, { timeoutMs: 30000 });
      await wb.shot("review-inline", "after the turn: the two changed ranges highlighted in the editor with Keep / Undo per hunk and per file (CodeLens), the panel's review box");
      // Keep the first hunk (calc_total's docstring), undo the second (restock's).
      await page.locator(".codelens-decoration a", { hasText: /^Keep \(/ }).first().click();
      await review.locator(".review-head", { hasText: "1 change in 1 file to review (1 kept)" }).waitFor({ timeout: 20000 });
      // VS Code redraws CodeLenses a moment after they change: wait for the kept hunk's to go.
      const hunkUndo = page.locator(".codelens-decoration a", { hasText: /^Undo$/ });
      await waitFor("the kept hunk's CodeLens to go", async () => (await page.locator(".codelens-decoration a", { hasText: /^Keep \(/ }).count()) === 1);
      assert.equal(await hunkUndo.count(), 1);
      await hunkUndo.first().click();
      await review.locator(".review-head", { hasText: "Changes reviewed: 1 kept, 1 undone" }).waitFor({ timeout: 20000 });
      const reviewed = Date.now();
      await waitFor("the undone hunk gone from the buffer", async () => {
        const text = await wb.editorText();
        return text.includes("The stock value: price times quantity, summed.") && text.includes('"""Add `amount` units to an item."""');
      });
      // Nothing waits for review any more: every Cadenza CodeLens goes (bounded; it failed to once).
      const reviewLenses = page.locator(".editor-group-container.active .codelens-decoration", { hasText: /to review|Keep|Undo/ });
      await waitFor("the review CodeLenses to go after the last hunk was reviewed", async () => (await reviewLenses.count()) === 0, { timeoutMs: 15000 }).catch(
        async (error) => {
          error.message += ` (still shown: ${JSON.stringify(await reviewLenses.allInnerTexts())})`;
          throw error;
        },
      );
      console.log(`# the review CodeLenses went ${Date.now() - reviewed} ms after the panel showed the review done`);
      await wb.shot("review-done", "Keep on the first hunk, Undo on the second: the buffer has the kept change only, the panel says 1 kept, 1 undone, no CodeLens left");

      await send("Thanks");
      await turnEnded(2);
      const sent = await fake.requests();
      const told = texts(sent.at(-1), "user").at(-1) + texts(sent.at(-1), "system").join("\n");
      assert.match(told, /undid|undone/i, `the next request does not say what was undone: ${told}`);
      assert.ok(told.includes("no upper bound"), `the next request does not name the undone change: ${told}`);
      assert.ok(!/Total value|price times quantity, summed/.test(told.split(/undid|undone/i)[1] ?? ""), "the kept hunk is reported as undone");
      await wb.focusEditor();
      await wb.command("File: Revert File");
    }));
});
