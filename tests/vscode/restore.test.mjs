// "Restore" on one of the person's messages in the Cadenza view, end to end in real VS Code
// (code-server + headless Chromium, the packaged .vsix, the real `cadenza serve`, the scripted
// model of fake_model.py): two turns each edit inventory.py; Restore on the second message puts
// the file back as it was before it (through the server's workspace/applyEdit, in the unsaved
// buffer), cuts the conversation there and puts the message back in the input; sent again,
// edited, the model sees the first turn only. Screenshots go to test-artifacts/vscode/restore/.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { call, texts } from "./fakemodel.mjs";
import { waitFor } from "./harness.mjs";
import { step as runStep, startScripted, stopScripted, diagnostics as scriptedDiagnostics } from "./scripted.mjs";

const CALC_BEFORE = '"""Total value of the items in stock."""';
const CALC_AFTER = '"""The stock value: price times quantity, summed."""';
const RESTOCK_BEFORE = '"""Add `amount` units to an item."""';
const RESTOCK_AFTER = '"""Add `amount` units to an item (no upper bound)."""';
const SECOND = "Now reword the docstring of restock";

let ctx, fake, vscode, page, wb;

const diagnostics = () => scriptedDiagnostics(ctx);

describe("Restore to before a message in the Cadenza view (code-server)", { timeout: 600000 }, () => {
  before(async () => {
    ctx = await startScripted("restore");
    ({ fake, vscode } = ctx);
    ({ page, wb } = vscode);
  });

  after(() => stopScripted(ctx));

  const step = (name, body) => runStep(ctx, name, body);

  async function openView() {
    if (await wb.panel().locator("button#new-session").isVisible().catch(() => false)) return;
    await page.locator(".part.activitybar .action-item .action-label[aria-label^='Cadenza']").first().click();
    await wb.panel().locator("button#new-session").waitFor({ timeout: 30000 });
  }

  async function send(text) {
    const input = wb.panel().locator("textarea#prompt");
    await input.click();
    await page.keyboard.type(text);
    await page.keyboard.press("Enter");
  }

  async function turnEnded(count) {
    const session = wb.panel().locator("section.session.current");
    await waitFor(`turn ${count} to end`, async () => (await session.locator(".end").count()) === count && (await session.getAttribute("class")).includes("state-ended"), {
      timeoutMs: 60000,
    });
    return session;
  }

  it("Restore on the second message: the file back as before it, the message back in the input", async () =>
    step("restore", async () => {
      await fake.script(
        call("edit_file", { path: "inventory.py", old_string: CALC_BEFORE, new_string: CALC_AFTER }, "e1"),
        { content: "Reworded calc_total." },
        call("edit_file", { path: "inventory.py", old_string: RESTOCK_BEFORE, new_string: RESTOCK_AFTER }, "e2"),
        { content: "Reworded restock." },
        { content: "Kept it short." },
      );
      await wb.openFile("inventory.py");
      await openView();
      await wb.panel().locator("button#new-session").click();
      await send("Reword the docstring of calc_total");
      await turnEnded(1);
      await send(SECOND);
      const session = await turnEnded(2);
      await waitFor("both edits in the buffer", async () => {
        const text = await wb.editorText();
        return text.includes(CALC_AFTER) && text.includes(RESTOCK_AFTER);
      });

      const message = session.locator(".user-text.prompt", { hasText: SECOND });
      const restore = message.locator("button.restore");
      await restore.waitFor({ timeout: 20000 });
      assert.equal(await restore.getAttribute("data-turn"), "2");
      await wb.shot("before-restore", "two turns, each changed inventory.py; Restore on each of the person's messages");
      await restore.click();

      const input = wb.panel().locator("textarea#prompt");
      await waitFor("the message back in the input", async () => (await input.inputValue()) === SECOND, { timeoutMs: 30000 });
      await waitFor("the file as before the second message", async () => {
        const text = await wb.editorText();
        return text.includes(CALC_AFTER) && text.includes(RESTOCK_BEFORE) && !text.includes(RESTOCK_AFTER);
      });
      await session.locator(".note", { hasText: "Restored to before this message: 1 file put back." }).waitFor();
      // The restored turn's changes are no longer offered for review in the editor.
      const lenses = page.locator(".editor-group-container.active .codelens-decoration", { hasText: /to review|Keep|Undo/ });
      await waitFor("the restored turn's review CodeLenses to go", async () => (await lenses.count()) === 0, { timeoutMs: 15000 });
      assert.equal(await session.locator(".user-text.prompt").count(), 0, "the restored message is still in the conversation");
      assert.equal(await session.locator(".end").count(), 1);
      await wb.shot("restored", "after Restore on the second message: restock's docstring back as it was, calc_total's change kept, the message back in the input");

      // Edited and sent again: the model sees the first turn, not the restored one.
      await input.click();
      await page.keyboard.type(", briefly");
      await page.keyboard.press("Enter");
      await turnEnded(2);
      const sent = await fake.requests();
      assert.equal(sent.length, 5, `expected 5 model requests, got ${sent.length}`);
      const users = texts(sent.at(-1), "user");
      assert.ok(users.some((t) => t.startsWith("Reword the docstring of calc_total")), `turn 1 missing: ${JSON.stringify(users)}`);
      assert.equal(users.at(-1), `${SECOND}, briefly`);
      assert.equal(users.filter((t) => t.startsWith(SECOND)).length, 1, `the restored message reached the model: ${JSON.stringify(users)}`);
      assert.ok(!texts(sent.at(-1), "assistant").includes("Reworded restock."), "the restored turn's reply reached the model");
      await wb.focusEditor();
      await wb.command("File: Revert File");
    }));
});
