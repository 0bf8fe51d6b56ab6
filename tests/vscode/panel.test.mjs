// The notifications and the Cadenza view as a person sees them all day, end to end in real VS
// Code (code-server + headless Chromium, the packaged .vsix, the real `cadenza serve`, the
// scripted model of fake_model.py):
//
// - a session's progress notification reads the person's task (not the editor context added for
//   the model) and is off the screen before the session's end notification shows, even for a
//   session that fails at once (VS Code keeps a progress notification 800 ms at least);
// - the finish notification is a one-line summary of the final message (no Markdown, HTML or
//   code) with Show Panel, which brings the view back;
// - a wide code block scrolls sideways in the view, long words wrap, the view never overflows;
// - the context meter beside the input follows each request ("12% of 32k");
// - the side bar with a conversation, a change and its Keep / Undo: the README's screenshot
//   (clients/vscode/media/sidebar.png is the shot named "sidebar").
// Screenshots go to test-artifacts/vscode/panel/.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { PYTHON, REPO, freshArtifacts, launchVSCode, prerequisites } from "./codeserver.mjs";
import { call, startFakeModel } from "./fakemodel.mjs";
import { isolatedEnv, sleep, stopGroup, tail, waitFor } from "./harness.mjs";

const ARTIFACTS = path.join(REPO, "test-artifacts", "vscode", "panel");
const CONTEXT_SIZE = 32768;

/** A final message with everything a notification must not show: heading, marks, a list, code, HTML. */
const WIDE = `report = build_report(items, currency="EUR", decimals=2, include_empty=False, sort_by="value", title="Stock value per item")`;
const REPLY = [
  "## Summary",
  "",
  "Renamed **calc_total** and added `typing` hints:",
  "",
  "- inventory.py",
  "- report.py",
  "",
  "```python",
  WIDE,
  "```",
  "",
  '<script>document.body.dataset.pwned = "script"</script>',
  "See https://example.org/a/very/long/path/that/does/not/break/anywhere/on/its/own/and/keeps/going/on/and/on",
].join("\n");

let tmp, workspace, fake, vscode, page, wb, fakeLog;

function diagnostics() {
  return `${vscode?.diagnostics() ?? ""}\n--- fake model\n${tail(fakeLog, 20)}`;
}

/**
 * Record the notification toasts every 16 ms in the page (each change: when, and each toast's
 * text and whether it has a Cancel button), so a test can tell what was on screen together.
 */
async function watchToasts() {
  await page.evaluate(() => {
    const state = (window.__toastWatch ??= { frames: [], last: "", timer: 0 });
    state.frames = [];
    state.last = "";
    clearInterval(state.timer);
    state.timer = setInterval(() => {
      const toasts = [...document.querySelectorAll(".notifications-toasts .notification-toast")].map((t) => ({
        text: t.innerText.replace(/\s+/g, " ").trim(),
        message: (t.querySelector(".notification-list-item-message")?.innerText ?? "").trim(),
        cancel: [...t.querySelectorAll(".monaco-button")].some((b) => b.textContent.trim() === "Cancel"),
      }));
      const key = JSON.stringify(toasts);
      if (key !== state.last) {
        state.last = key;
        state.frames.push({ at: Math.round(performance.now()), toasts });
      }
    }, 16);
  });
}

async function toastFrames() {
  return page.evaluate(() => window.__toastWatch?.frames ?? []);
}

/** Fail when a frame showed a progress notification (Cancel) beside the notification with `text`. */
function assertNeverBeside(frames, text) {
  const shown = frames.filter((f) => f.toasts.some((t) => t.text.includes(text)));
  assert.ok(shown.length > 0, `no notification "${text}" was recorded: ${JSON.stringify(frames)}`);
  const together = shown.filter((f) => f.toasts.some((t) => t.cancel));
  assert.deepEqual(together, [], "a progress notification (with Cancel) showed beside the end notification");
}

describe("the Cadenza notifications and view, as used all day (code-server)", { timeout: 600000 }, () => {
  before(async () => {
    const started = Date.now();
    prerequisites();
    freshArtifacts(ARTIFACTS);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cadenza-vscode-panel-"));
    workspace = path.join(tmp, "inventory");
    fs.cpSync(path.join(REPO, "examples", "inventory"), workspace, { recursive: true });
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
        "cadenza.server.command": [PYTHON, "-m", "cadenza"],
        "cadenza.server.env": { OPENAI_API_KEY: "test-key" },
        "cadenza.server.logLevel": "INFO",
        "cadenza.contextSize": CONTEXT_SIZE,
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
      error.message += `\n\nscreenshot: test-artifacts/vscode/panel/failure-${name}.png\n${diagnostics()}`;
      throw error;
    }
  }

  /** The Cadenza view, from its icon in the activity bar (a click on an open one would close it). */
  async function openView() {
    if (await wb.panel().locator("button#new-session").isVisible().catch(() => false)) return;
    await page.locator(".part.activitybar .action-item .action-label[aria-label^='Cadenza']").first().click();
    await wb.panel().locator("button#new-session").waitFor({ timeout: 30000 });
  }

  async function runTask(task) {
    await wb.command("Cadenza: Run Task…");
    await wb.waitForQuickInput("Cadenza: Run Task");
    await page.keyboard.type(task);
    await page.keyboard.press("Enter");
  }

  it("a session that fails at once: its progress reads the task alone and is gone before the error shows", async () =>
    step("progress-closes", async () => {
      await fake.reset();
      await fake.script({ status: 401 });
      await wb.openFile("report.py"); // the task goes out with "Active file: report.py …"
      await wb.clearNotifications();
      await watchToasts();
      await runTask("Fail with a 401");
      const error = "The openai provider refused the API key (HTTP 401)";
      await wb.waitForToast(error, 60000);
      await sleep(300);
      await wb.shot("error-alone", "a session that failed at once: the error notification alone, its progress notification already gone");
      const frames = await toastFrames();
      assertNeverBeside(frames, error);
      // The progress notification showed (with Cancel), reading the person's task only.
      const progress = frames.flatMap((f) => f.toasts).filter((t) => t.cancel);
      assert.ok(progress.length > 0, `no progress notification was recorded: ${JSON.stringify(frames)}`);
      for (const t of progress) {
        assert.match(t.message, /^Cadenza: Fail with a 401( — .*)?$/, `the progress notification reads: ${t.message}`);
        assert.ok(!t.text.includes("Active file"), `the progress notification shows the editor context: ${t.text}`);
      }
      // The sent task still has the context (the model needs it).
      const [sent] = await fake.requests();
      assert.ok(sent.messages.some((m) => m.role === "user" && String(m.content).includes("Active file: report.py")), "the context did not reach the model");
    }));

  it("the finish notification is one line with Show Panel; wide code scrolls in the view, nothing overflows", async () =>
    step("finish-summary", async () => {
      await fake.reset();
      await fake.script({ content: REPLY, delay_s: 3 });
      await wb.clearNotifications();
      await watchToasts();
      await runTask("Summarize the change in Markdown");
      await wb.waitForToast("Cadenza: Summarize the change in Markdown", 60000);
      // Hide the side bar: Show Panel brings the view back.
      await wb.command("View: Close Primary Side Bar");
      await page.locator(".part.sidebar").waitFor({ state: "hidden", timeout: 10000 });
      const summary = "Cadenza finished: Renamed calc_total and added typing hints…";
      const toast = await wb.waitForToast(summary, 60000);
      const message = (await toast.locator(".notification-list-item-message").innerText()).trim();
      assert.equal(message, summary, "the finish notification is not the one-line summary");
      await toast.locator(".monaco-button", { hasText: "Show Panel" }).waitFor();
      await sleep(300);
      await wb.shot("finish-summary", "the finish notification: one line (the first sentence, no Markdown, HTML or code) with Show Panel; no progress notification beside it");
      assertNeverBeside(await toastFrames(), summary);
      await toast.locator(".monaco-button", { hasText: "Show Panel" }).click();
      await page.locator(".part.sidebar").waitFor({ state: "visible", timeout: 10000 });
      const session = wb.panel().locator('section.session[data-stop-reason="end_turn"]', { hasText: "Summarize the change in Markdown" });
      await session.waitFor({ timeout: 20000 });

      // The wide line scrolls inside its block; the long link wraps; the view does not scroll sideways.
      const pre = session.locator(".agent-text pre").first();
      const box = await pre.evaluate((node) => {
        const style = getComputedStyle(node);
        const before = node.scrollLeft;
        node.scrollLeft = node.scrollWidth;
        return {
          overflowX: style.overflowX,
          whiteSpace: style.whiteSpace,
          scrollWidth: node.scrollWidth,
          clientWidth: node.clientWidth,
          before,
          after: node.scrollLeft,
          right: node.getBoundingClientRect().right,
          viewport: document.documentElement.clientWidth,
          page: document.documentElement.scrollWidth,
        };
      });
      assert.equal(box.whiteSpace, "pre", `the code block wraps: ${JSON.stringify(box)}`);
      assert.ok(box.scrollWidth > box.clientWidth, `the wide line does not overflow its block: ${JSON.stringify(box)}`);
      assert.ok(box.before === 0 && box.after > 0, `the code block does not scroll sideways: ${JSON.stringify(box)}`);
      assert.ok(box.right <= box.viewport, `the code block is wider than the view: ${JSON.stringify(box)}`);
      assert.ok(box.page <= box.viewport, `the view scrolls sideways: ${JSON.stringify(box)}`);
      const link = await session.locator(".agent-text p", { hasText: "example.org" }).evaluate((node) => ({
        scrollWidth: node.scrollWidth,
        clientWidth: node.clientWidth,
      }));
      assert.ok(link.scrollWidth <= link.clientWidth, `a long word is cut off: ${JSON.stringify(link)}`);
      await pre.scrollIntoViewIfNeeded();
      await wb.shot("wide-code", "a wide line of code in the view, scrolled sideways to its end; the long link wraps");
    }));

  it("the context meter follows each request; the side bar with a conversation and its change to review (README)", async () =>
    step("meter", async () => {
      await fake.reset();
      await wb.command("View: Close All Editors");
      await wb.openFile("inventory.py");
      await openView();
      await wb.command("Cadenza: Clear Panel"); // the earlier tests' sessions: not in the README's picture
      await wb.panel().locator("section.session").first().waitFor({ state: "detached", timeout: 10000 });
      await wb.panel().locator("button#new-session").click();
      await wb.panel().locator("#target", { hasText: "The next message starts a new session." }).waitFor();
      const meter = wb.panel().locator("#meter");
      assert.equal(await meter.isVisible(), false, "a meter before any request");

      await fake.script({ content: "`calc_total` returns the stock value: the sum of **price × quantity** over the items.", prompt_tokens: 1850 });
      const input = wb.panel().locator("textarea#prompt");
      await input.click();
      await page.keyboard.type("What does calc_total compute?");
      await page.keyboard.press("Enter");
      const session = wb.panel().locator("section.session.current");
      await session.locator(".end").first().waitFor({ timeout: 60000 });
      await meter.locator(".meter-text", { hasText: "6% of 32k" }).waitFor({ timeout: 20000 });

      await fake.script(
        { ...call("read_file", { path: "inventory.py" }, "r1"), prompt_tokens: 2400 },
        {
          ...call("edit_file", { path: "inventory.py", old_string: "def calc_total(items):", new_string: "def calc_total(items: list[Item]) -> float:" }, "e1"),
          prompt_tokens: 3100,
        },
        {
          ...call("edit_file", { path: "inventory.py", old_string: "def restock(item, amount):", new_string: "def restock(item: Item, amount: int) -> Item:" }, "e2"),
          prompt_tokens: 3600,
        },
        {
          content: "Added type hints to `calc_total` and `restock`:\n\n```python\ndef calc_total(items: list[Item]) -> float:\ndef restock(item: Item, amount: int) -> Item:\n```",
          prompt_tokens: 3932,
          delay_s: 3,
        },
      );
      await input.click();
      await page.keyboard.type("Add type hints to calc_total and restock");
      await page.keyboard.press("Enter");
      // While the last request runs, the meter shows the one before it.
      await meter.locator(".meter-text", { hasText: "11% of 32k" }).waitFor({ timeout: 30000 });
      await waitFor("the second turn to end", async () => (await session.locator(".end").count()) === 2, { timeoutMs: 60000 });
      await meter.locator(".meter-text", { hasText: "12% of 32k" }).waitFor({ timeout: 20000 });
      assert.equal(
        await meter.getAttribute("title"),
        "Context in use: 3,932 of 32,768 tokens (12%), the prompt of the latest model request in this conversation. Near 70% Cadenza summarizes older turns.",
      );
      const review = session.locator(".review");
      await review.locator(".review-head", { hasText: "2 changes in 1 file to review" }).waitFor({ timeout: 20000 });
      const lenses = page.locator(".editor-group-container.active .codelens-decoration");
      await waitFor("the Keep/Undo CodeLenses", async () => (await lenses.filter({ hasText: "Undo" }).count()) >= 2, { timeoutMs: 30000 });

      // The README's screenshot: a wider side bar, the conversation's end in view, nothing else on top.
      await widenSideBar(470);
      await wb.clearNotifications();
      await wb.panel().locator("#composer").scrollIntoViewIfNeeded();
      await wb.panel().locator("body").evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await sleep(1200);
      const shot = await wb.shot("sidebar", "the Cadenza view in the side bar: a conversation whose second turn changed inventory.py (Keep / Undo in the view and in the editor), the context meter beside the input");
      fs.copyFileSync(shot, path.join(ARTIFACTS, "sidebar.png"));
      await wb.focusEditor();
      await wb.command("File: Revert File");
    }));

  /** Drag the side bar's edge until it is `width` pixels wide. */
  async function widenSideBar(width) {
    const bar = await page.locator(".part.sidebar").boundingBox();
    const sashes = page.locator(".monaco-sash.vertical");
    const count = await sashes.count();
    for (let i = 0; i < count; i++) {
      const sash = await sashes.nth(i).boundingBox();
      if (!sash || sash.height < 200 || Math.abs(sash.x + sash.width / 2 - (bar.x + bar.width)) > 4) continue;
      const y = sash.y + sash.height / 2;
      await page.mouse.move(sash.x + sash.width / 2, y);
      await page.mouse.down();
      await page.mouse.move(bar.x + width, y, { steps: 10 });
      await page.mouse.up();
      await page.mouse.move(bar.x + width + 600, 800); // off the sash: its highlight goes
      await waitFor("the side bar to widen", async () => Math.abs((await page.locator(".part.sidebar").boundingBox()).width - width) < 8, { timeoutMs: 5000 });
      return;
    }
    throw new Error(`no sash at the side bar's edge (x ${bar.x + bar.width})`);
  }
});
