// Permissions a person can live with, and the context meter, end to end in real VS Code
// (code-server + headless Chromium, the packaged .vsix, the real `cadenza serve`, the scripted
// model of fake_model.py):
//
// - while a session waits for the model's first reply the meter beside the input reads
//   "context —"; after it, the share of the model's context in use;
// - the permission modal of a command offers "Always allow `make …` in this workspace" (a build tool: it
//   runs the Makefile); chosen,
//   the next session's `make` runs unasked, and nothing is written into the workspace;
// - "Cadenza: Manage Permissions" lists the remembered rule in a quick pick; choosing it revokes
//   it, and the next `make` is asked again.
// Screenshots go to test-artifacts/vscode/permissions/.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { call } from "./fakemodel.mjs";
import { waitFor } from "./harness.mjs";
import { step as runStep, startScripted, stopScripted, diagnostics as scriptedDiagnostics } from "./scripted.mjs";

const CONTEXT_SIZE = 32768;
const PATTERN = "Always allow `make …` in this workspace (it runs this workspace's Makefile)";

let ctx, workspace, home, fake, vscode, page, wb;

const diagnostics = () => scriptedDiagnostics(ctx);

/** The rules the person's state keeps for the workspace (never a file in the workspace). */
function storedRules() {
  const dir = path.join(home, "xdg_state_home", "cadenza", "permissions");
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith(".json")).flatMap((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")).allow ?? []);
}

describe("pattern permissions and the context meter (code-server)", { timeout: 600000 }, () => {
  before(async () => {
    const started = Date.now();
    ctx = await startScripted("permissions", { "cadenza.contextSize": CONTEXT_SIZE });
    ({ workspace, home, fake, vscode } = ctx);
    fs.writeFileSync(path.join(workspace, "Makefile"), "%.txt:\n\ttouch $@\n");
    ({ page, wb } = vscode);
    console.log(`# set up in ${((Date.now() - started) / 1000).toFixed(1)} s (code-server port ${vscode.port})`);
  });

  after(() => stopScripted(ctx));

  const step = (name, body) => runStep(ctx, name, body);

  async function openView() {
    if (await wb.panel().locator("button#new-session").isVisible().catch(() => false)) return;
    await page.locator(".part.activitybar .action-item .action-label[aria-label^='Cadenza']").first().click();
    await wb.panel().locator("button#new-session").waitFor({ timeout: 30000 });
  }

  /** A new conversation in the view, its first message `task`. */
  async function send(task) {
    await openView();
    await wb.panel().locator("button#new-session").click();
    await wb.panel().locator("#target", { hasText: "The next message starts a new session." }).waitFor();
    const input = wb.panel().locator("textarea#prompt");
    await input.click();
    await page.keyboard.type(task);
    await page.keyboard.press("Enter");
  }

  /** The current conversation's turn ended with `text`. */
  async function ended(text) {
    await wb.panel().locator("section.session.current.state-ended", { hasText: text }).first().waitFor({ timeout: 60000 });
  }

  const dialog = (command) => page.locator(".monaco-dialog-box", { hasText: `Cadenza wants to run \`${command}\`` });

  it("the meter reads \"context —\" before the first reply; the modal offers the command's pattern", async () =>
    step("pattern-prompt", async () => {
      await fake.reset();
      await fake.script(
        { ...call("run_command", { command: "make marker.txt" }, "c1"), prompt_tokens: 2000, delay_s: 4 },
        { content: "Made marker.txt.", prompt_tokens: 2600 },
      );
      await wb.clearNotifications();
      await send("Make a marker file");
      const meter = wb.panel().locator("#meter");
      await meter.locator(".meter-text", { hasText: "context —" }).waitFor({ timeout: 20000 });
      assert.match(await meter.getAttribute("title"), /first reply/);
      await wb.shot("context-meter-before-reply", "the context meter beside the input while the session waits for the model's first reply");

      const asked = dialog("make marker.txt");
      await asked.waitFor({ timeout: 60000 });
      // The dialog orders its buttons by platform (on Linux the first option is last).
      const buttons = (await asked.locator(".monaco-button").allInnerTexts()).map((t) => t.trim()).filter((t) => t && t !== "Cancel");
      assert.deepEqual(buttons.sort(), ["Allow once", PATTERN, "Always allow", "Reject", "Always reject"].sort());
      await wb.shot("pattern-prompt", "the permission modal of a command: Always allow `make …` in this workspace");
      await asked.locator(".monaco-button", { hasText: PATTERN }).click();
      await ended("Made marker.txt.");
      assert.ok(fs.existsSync(path.join(workspace, "marker.txt")), "the allowed command did not run");
      await meter.locator(".meter-text", { hasText: "8% of 32k" }).waitFor({ timeout: 20000 });
      await wb.shot("context-meter", "the context meter after the session's replies: 8% of 32k");
      assert.deepEqual(storedRules(), ["run_command:make *"]);
    }));

  it("the next session's touch runs without asking", async () =>
    step("remembered", async () => {
      await fake.reset();
      await fake.script(call("run_command", { command: "make again.txt" }, "c2"), { content: "Touched it again." });
      await wb.clearNotifications();
      await send("Touch another file");
      await ended("Touched it again.");
      assert.equal(await page.locator(".monaco-dialog-box").count(), 0, "a permission modal was shown");
      const [sent] = (await fake.requests()).slice(-1);
      const results = sent.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      assert.match(results[0], /^exit code 0/);
      assert.deepEqual(
        fs.readdirSync(workspace).filter((f) => f.endsWith(".json")),
        [],
        "a permission was written into the workspace",
      );
    }));

  it("Manage Permissions lists the rule; choosing it revokes it and the command is asked again", async () =>
    step("manage", async () => {
      await wb.command("Cadenza: Manage Permissions");
      const widget = await wb.waitForQuickInput("Choose a rule to revoke");
      const row = widget.locator(".quick-input-list .monaco-list-row", { hasText: "Allow commands `make *`" });
      await row.waitFor({ timeout: 10000 });
      assert.match(await row.innerText(), /this workspace/);
      await wb.shot("manage-permissions", "Cadenza: Manage Permissions: the rule remembered for this workspace, chosen to revoke");
      await row.click();
      await wb.waitForToast("Cadenza: revoked commands `make *`; Cadenza asks again.", 20000);
      assert.deepEqual(storedRules(), []);

      await fake.reset();
      await fake.script(call("run_command", { command: "make third.txt" }, "c3"), { content: "Not allowed." });
      await wb.clearNotifications();
      await send("Touch a third file");
      const asked = dialog("make third.txt");
      await asked.waitFor({ timeout: 60000 });
      await asked.locator(".monaco-button", { hasText: /^Reject$/ }).click();
      await ended("Not allowed.");
      assert.ok(!fs.existsSync(path.join(workspace, "third.txt")), "a rejected command ran");
    }));
});
