// Driving VS Code's workbench (code-server in Chromium) the way a person does: the command
// palette, quick input, notifications, editor tabs and the Cadenza panel's webview.

import * as fs from "node:fs";
import * as path from "node:path";

import { sleep, waitFor } from "./harness.mjs";

export const NBSP = /\u00a0/g;

export class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
    this.shots = [];
  }

  /** Save a screenshot as NN-name.png under the artifacts folder. */
  async shot(name, description) {
    const file = path.join(this.artifacts, `${String(this.shots.length + 1).padStart(2, "0")}-${name}.png`);
    await this.page.screenshot({ path: file });
    this.shots.push({ file, description });
    return file;
  }

  async waitForWorkbench() {
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 90000 });
    // The explorer shows the workspace once the file service is up.
    await this.page.locator(".explorer-folders-view .monaco-list-row").first().waitFor({ timeout: 60000 });
  }

  quickInput() {
    return this.page.locator(".quick-input-widget");
  }

  /** Run a command from the palette by its title, e.g. "Cadenza: Run Task…". */
  async command(title) {
    const widget = this.quickInput();
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press("F1");
      try {
        await widget.waitFor({ state: "visible", timeout: 10000 });
        break;
      } catch (error) {
        if (attempt >= 3) throw new Error(`the command palette did not open: ${error.message}`);
      }
    }
    const input = widget.locator(".quick-input-box input");
    await input.fill(`>${title}`);
    const row = widget.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
    await row.waitFor({ timeout: 20000 }).catch(() => {
      throw new Error(`the command palette has no command "${title}" (is the extension installed?)`);
    });
    // The first row is the best match once the list settled on the typed text.
    await waitFor(`"${title}" as the palette's first match`, async () => {
      const first = await widget.locator(".quick-input-list .monaco-list-row").first().innerText();
      return first.includes(title);
    }, { timeoutMs: 10000 });
    await input.press("Enter");
  }

  /** Wait for the quick input to show `text` (its title, prompt or placeholder). */
  async waitForQuickInput(text, timeoutMs = 30000) {
    const widget = this.quickInput();
    await waitFor(`a quick input showing "${text}"`, async () => {
      if (!(await widget.isVisible())) return false;
      const shown = await widget.evaluate((node) => {
        const input = node.querySelector(".quick-input-box input");
        return `${node.innerText}\n${input?.getAttribute("placeholder") ?? ""}\n${input?.getAttribute("aria-label") ?? ""}`;
      });
      return shown.replace(NBSP, " ").includes(text);
    }, { timeoutMs });
    return widget;
  }

  /** Type into the open quick input and press Enter. */
  async answerQuickInput(text) {
    const input = this.quickInput().locator(".quick-input-box input");
    await input.fill(text);
    await input.press("Enter");
    await this.quickInput().waitFor({ state: "hidden", timeout: 10000 }).catch(() => {});
  }

  /** Open a workspace file with Quick Open (Ctrl+P); tried again once if no tab shows it. */
  async openFile(name) {
    const widget = this.quickInput();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.focusEditor();
        await this.page.keyboard.press("Control+P");
        await widget.waitFor({ state: "visible", timeout: 10000 });
        const input = widget.locator(".quick-input-box input");
        await input.fill(name);
        await waitFor(`"${name}" as Quick Open's first match`, async () =>
          (await widget.locator(".quick-input-list .monaco-list-row").first().innerText()).includes(name),
        { timeoutMs: 20000 });
        await input.press("Enter");
        await this.page.locator(".tab.active", { hasText: name }).waitFor({ timeout: 10000 });
        await this.page.locator(".editor-instance .monaco-editor .view-lines").first().waitFor({ timeout: 20000 });
        return;
      } catch (error) {
        if (attempt >= 2) throw new Error(`could not open ${name} with Quick Open: ${error.message}`);
        await this.page.keyboard.press("Escape");
      }
    }
  }

  /** Put the cursor on a line and select the whole line's text. */
  async selectLine(line) {
    await this.page.keyboard.press("Control+G");
    await this.waitForQuickInput(":");
    await this.quickInput().locator(".quick-input-box input").fill(`:${line}`);
    await this.quickInput().locator(".quick-input-box input").press("Enter");
    await sleep(300);
    await this.page.keyboard.press("Home");
    await this.page.keyboard.press("Shift+End");
  }

  /** The active editor's visible text (its rendered lines). */
  async editorText() {
    const lines = await this.page
      .locator(".editor-group-container.active .monaco-editor .view-lines .view-line")
      .evaluateAll((nodes) =>
        nodes
          .map((n) => ({ top: parseFloat(n.style.top || "0"), text: n.textContent ?? "" }))
          .sort((a, b) => a.top - b.top)
          .map((n) => n.text),
      );
    return lines.join("\n").replace(NBSP, " ");
  }

  async activeTabIsDirty() {
    return this.page.locator(".tab.active").evaluate((tab) => tab.classList.contains("dirty"));
  }

  toasts() {
    return this.page.locator(".notifications-toasts .notification-toast");
  }

  toast(text) {
    return this.toasts().filter({ hasText: text });
  }

  /** The texts of the visible notification toasts. */
  async toastTexts() {
    return (await this.toasts().allInnerTexts()).map((t) => t.replace(NBSP, " ").replace(/\s+/g, " ").trim());
  }

  /**
   * Wait for a notification containing `text`; fail at once on one matching `failOn` (the
   * extension's error notifications), with what is shown in the message.
   */
  async waitForToast(text, timeoutMs = 30000, failOn = /Cadenza could not|Cadenza failed|server crashed/) {
    let shown = [];
    try {
      await waitFor(`a notification "${text}"`, async () => {
        shown = await this.toastTexts();
        const failure = shown.find((t) => failOn.test(t) && !t.includes(text));
        if (failure) throw Object.assign(new Error(`error notification: ${failure}`), { fatal: true });
        return shown.some((t) => t.includes(text));
      }, { timeoutMs, failFast: (error) => error.fatal });
    } catch (error) {
      error.message += ` (notifications shown: ${JSON.stringify(shown)})`;
      throw error;
    }
    return this.toast(text).first();
  }

  /**
   * Whether a notification containing `text` was shown: as a toast, or (a toast VS Code has
   * hidden again: it hides plain information messages after a while) in the notification center.
   */
  async notificationShown(text, timeoutMs = 30000) {
    try {
      await this.waitForToast(text, timeoutMs, /$^/);
      return true;
    } catch {
      await this.command("Notifications: Show Notifications");
      const items = this.page.locator(".notifications-center .notification-list-item", { hasText: text });
      const found = await items.first().waitFor({ timeout: 5000 }).then(() => true, () => false);
      await this.page.keyboard.press("Escape");
      return found;
    }
  }

  async clearNotifications() {
    await this.command("Notifications: Clear All Notifications");
    await sleep(300);
  }

  /** The Cadenza panel's webview document (the inner frame of the view's iframe). */
  panel() {
    return this.page.frameLocator('iframe[src*="extensionId=cadenza.cadenza"]').frameLocator("iframe#active-frame");
  }

  async focusEditor() {
    await this.command("View: Focus Active Editor Group");
  }
}

export function readJson(file) {
  return JSON.parse(fs.readFileSync(file, "utf8"));
}
