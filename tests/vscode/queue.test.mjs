// Messages while a turn runs, and the agent's plan, end to end in real VS Code (code-server +
// headless Chromium, the packaged .vsix, the real `cadenza serve`, the scripted model of
// fake_model.py): two messages typed while the agent works are shown queued; one is removed
// with its x, the other steered into the running turn (the model reads it at its next step);
// a third waits for the turn's end and goes as the next turn. The plan is a checklist,
// updated as its steps finish. Screenshots go to test-artifacts/vscode/queue/.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { call, texts } from "./fakemodel.mjs";
import { waitFor } from "./harness.mjs";
import { step as runStep, startScripted, stopScripted } from "./scripted.mjs";


let ctx, fake, vscode, page, wb;

const plan = (id, ...entries) => call("update_plan", { entries: entries.map(([content, status]) => ({ content, status })) }, id);

describe("messages while a turn runs, and the plan (code-server)", { timeout: 600000 }, () => {
  before(async () => {
    ctx = await startScripted("queue");
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

  it("queues, removes and steers messages while a turn runs; the queue goes when it ends", async () =>
    step("queue", async () => {
      await fake.reset();
      await fake.script(
        plan("p1", ["Read inventory.py", "in_progress"], ["Reword calc_total's docstring", "pending"], ["Check restock", "pending"]),
        plan("p2", ["Read inventory.py", "completed"], ["Reword calc_total's docstring", "in_progress"], ["Check restock", "pending"]),
        // Held back while the person queues, removes and steers.
        { ...call("read_file", { path: "inventory.py" }, "r1"), delay_s: 12 },
        plan("p3", ["Read inventory.py", "completed"], ["Reword calc_total's docstring", "completed"], ["Check restock", "completed"]),
        { content: "Done: the docstring reads better, restock is fine." },
        { content: "Summary: one docstring reworded." },
      );
      await openView();
      await wb.panel().locator("button#new-session").click();
      await send("Tidy the docstrings of inventory.py");
      const session = wb.panel().locator("section.session.current");
      const head = session.locator(".plan .plan-head").last();
      await head.filter({ hasText: "Plan · 1 of 3 done" }).waitFor({ timeout: 60000 });
      await wb.panel().locator("#target", { hasText: "Queues for:" }).waitFor();

      await send("Keep the docstrings short");
      await send("Also rename calc_total");
      const queued = session.locator(".queue .queued");
      await waitFor("two queued messages", async () => (await queued.count()) === 2);
      assert.deepEqual(await session.locator(".queue .queued-text").allInnerTexts(), ["Keep the docstrings short", "Also rename calc_total"]);
      assert.equal(await session.locator(".queue .queue-steer").count(), 2, "each queued message offers Steer");
      await wb.shot("queued", "two messages typed while the agent works: shown queued under the conversation, each with Steer and ×; the plan 1 of 3 done");

      await queued.filter({ hasText: "Also rename calc_total" }).locator(".queue-remove").click();
      await waitFor("the removed message to go", async () => (await queued.count()) === 1);
      await queued.filter({ hasText: "Keep the docstrings short" }).locator(".queue-steer").click();
      await session.locator(".user-text.prompt.steered", { hasText: "Keep the docstrings short" }).waitFor({ timeout: 20000 });
      assert.equal(await queued.count(), 0, "the steered message left the queue");
      await send("Then summarize what you did");
      await waitFor("the next message queued", async () => (await queued.count()) === 1);
      await session.locator(".plan .plan-item").first().scrollIntoViewIfNeeded();
      await wb.shot("plan-half-done", "the plan half done (1 of 3, the second step in progress), the steered message in the thread, one message queued for the turn's end");

      await waitFor("the queued message's turn to end", async () => (await session.locator(".end").count()) === 2 && (await session.getAttribute("class")).includes("state-ended"), {
        timeoutMs: 90000,
      });
      assert.equal(await queued.count(), 0, "the queue is empty");
      await session.locator(".user-text.prompt:not(.steered)", { hasText: "Then summarize what you did" }).waitFor();
      await session.locator(".plan .plan-head", { hasText: "Plan · 3 of 3 done" }).waitFor();
      await session.locator(".end").last().scrollIntoViewIfNeeded();
      await wb.shot("queue-sent", "the turn ended and the queued message went as the next turn; the plan all done (one checklist per turn)");

      const sent = await fake.requests();
      assert.equal(sent.length, 6, `expected 6 model requests, got ${sent.length}`);
      const steered = sent[3].messages.at(-1);
      assert.deepEqual([steered.role, steered.content], ["user", "Keep the docstrings short"], "the steer reached the running turn at its next step");
      assert.ok(!JSON.stringify(sent.slice(0, 3)).includes("Keep the docstrings short"), "the steer came before the held step ended");
      assert.ok(!JSON.stringify(sent).includes("Also rename calc_total"), "the removed message was sent");
      assert.equal(texts(sent[5], "user").at(-1), "Then summarize what you did");
      assert.equal(await session.locator(".plan").count(), 1, "one checklist for the turn");
    }));
});
