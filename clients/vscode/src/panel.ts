/**
 * The "Cadenza" panel: a webview view in its own view container of the activity bar (the side
 * bar) that renders the sessions of this window (the agent's messages as Markdown, tool calls
 * with their status, diffs with "Open diff", token usage per turn), and below them the input with
 * the context meter of the conversation it continues.
 *
 * The webview's script is dist/webview.js (src/webview/, bundled by esbuild with markdown-it and
 * DOMPurify). Its Content-Security-Policy allows that script (by nonce) and the stylesheet, and
 * nothing else: no inline script, no image, frame, font or connection.
 *
 * The whole view model is posted on each change (debounced): sessions are small, and a webview
 * that was hidden and shown again needs no replay. Diff texts stay in the extension.
 */

import * as vscode from "vscode";

import type { SessionStore } from "./sessions";

export const PANEL_VIEW_ID = "cadenza.panel";

export type PanelMessage =
  | { type: "ready" }
  | { type: "openDiff"; diffId: string }
  | { type: "openFile"; path: string }
  | { type: "cancel"; sessionId: string }
  | { type: "reply"; sessionId: string }
  | { type: "continue"; sessionId: string }
  | { type: "openLink"; href: string }
  | { type: "prompt"; text: string; mentions?: unknown }
  | { type: "complete"; requestId: number; trigger: string; query: string }
  | { type: "choose"; what: string; value: string }
  | { type: "newSession" }
  | { type: "history" }
  | { type: "focus"; sessionId: string }
  | { type: "restore"; sessionId: string; turn: number }
  | { type: "review"; sessionId: string; action: string; uris?: string[] }
  | { type: "fix"; sessionId: string }
  | { type: "unqueue"; sessionId: string; queueId: number }
  | { type: "steer"; sessionId: string; queueId: number }
  | { type: "run" };

/**
 * The webview's Content-Security-Policy: the panel's script (by nonce) and stylesheet only.
 * Rendered Markdown can hold no script (markdown.ts), and even if it did, it could not run,
 * load an image (an `onerror` never fires), frame a page or connect anywhere.
 */
export function panelCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    "img-src 'none'",
    "frame-src 'none'",
    "connect-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** Links of the panel that may open (in the browser, through VS Code): http(s) and mailto only. */
export function openableLink(href: unknown): string | undefined {
  return typeof href === "string" && /^(https?:\/\/|mailto:)/i.test(href) ? href : undefined;
}

export class PanelProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly store: SessionStore,
    private readonly onMessage: (message: PanelMessage) => void,
    private readonly chatState: () => object,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = this.html(view.webview, media, dist);
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: PanelMessage) => {
        if (message?.type === "ready") this.postState();
        else this.onMessage(message);
      }),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  /** Re-render soon (coalesces the many updates of a streaming reply). */
  refresh(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.postState();
    }, 40);
  }

  private postState(): void {
    this.post({ type: "state", sessions: this.store.list(), chat: this.chatState() });
  }

  /** Send the webview a message (the state, a completion list). */
  post(message: object): void {
    void this.view?.webview.postMessage(message);
  }

  /** Whether the panel shows now. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Show the panel (without taking focus from the editor). */
  async reveal(): Promise<void> {
    if (this.view) {
      this.view.show(true);
      return;
    }
    await vscode.commands.executeCommand(`${PANEL_VIEW_ID}.focus`);
    await vscode.commands.executeCommand("workbench.action.focusActiveEditorGroup");
  }

  private html(webview: vscode.Webview, media: vscode.Uri, dist: vscode.Uri): string {
    const nonce = Array.from({ length: 32 }, () => Math.floor(Math.random() * 36).toString(36)).join("");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.css"));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${panelCsp(webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style}" rel="stylesheet">
<title>Cadenza</title>
</head>
<body>
<div id="sessions" aria-live="polite"></div>
<div id="empty" class="empty">
  <p>No task yet.</p>
  <p class="hint">Describe one below, or <em>Cadenza: Run Task…</em> in the command palette (<button id="run" class="link">Run a task…</button>); select code first to give it as context.</p>
</div>
<div id="composer" class="composer">
  <div class="composer-head">
    <div id="target" class="target"></div>
    <span id="meter" class="meter" role="meter" aria-label="Context in use" aria-valuemin="0" aria-valuemax="100" hidden><span class="meter-bar"><span class="meter-fill"></span></span><span class="meter-text"></span></span>
  </div>
  <div id="chips" class="chips"></div>
  <div id="completion" class="completion" role="listbox" hidden></div>
  <textarea id="prompt" rows="2" aria-label="Message to Cadenza" placeholder="Ask Cadenza… (@ to mention a file, / for commands; Enter sends, Shift+Enter: new line)"></textarea>
  <div class="composer-bar">
    <select id="model" aria-label="Model" title="The model of the next turn"></select>
    <select id="workflow" aria-label="Mode" title="The mode (workflow) of the next turn"></select>
    <span class="spacer"></span>
    <button id="new-session" type="button" class="secondary" title="Start a new conversation with the next message">New</button>
    <button id="history" type="button" class="secondary" title="Earlier sessions">History</button>
    <button id="send" type="button" title="Send (Enter)">Send</button>
  </div>
</div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
