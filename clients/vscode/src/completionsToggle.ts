/**
 * Inline completions in the window: a status bar item that shows whether they are on and turns
 * `cadenza.completions.enabled` over on a click (command `cadenza.toggleCompletions`), and the
 * server's start on the first edit of a file while they are on (the server otherwise starts with
 * the first task, and ghost text needs it running).
 */

import * as vscode from "vscode";

import { COMPLETIONS_SETTING, completionsEnabled, completionsStatus, toggleScope } from "./completions";

export const TOGGLE_COMMAND = "cadenza.toggleCompletions";

const TARGETS = {
  workspaceFolder: vscode.ConfigurationTarget.WorkspaceFolder,
  workspace: vscode.ConfigurationTarget.Workspace,
  global: vscode.ConfigurationTarget.Global,
} as const;

export class CompletionsToggle implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("cadenza.completions", vscode.StatusBarAlignment.Right, 100);
  private readonly disposables: vscode.Disposable[] = [];
  /** The server's start was asked for since it last stopped (a failed start is not retried per keystroke). */
  private startAsked = false;

  /**
   * @param ensureServer starts the server when it is not running
   * @param isRunning whether a server runs
   * @param log a line for the Cadenza output channel
   */
  constructor(
    private readonly ensureServer: () => Promise<unknown>,
    private readonly isRunning: () => boolean,
    private readonly log: (line: string) => void,
  ) {
    this.item.name = "Cadenza Inline Completions";
    this.item.command = TOGGLE_COMMAND;
    this.disposables.push(
      this.item,
      vscode.commands.registerCommand(TOGGLE_COMMAND, () => this.toggle()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`cadenza.${COMPLETIONS_SETTING}`)) {
          this.startAsked = false;
          this.update();
        }
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.edited(e)),
    );
    this.update();
  }

  private enabled(): boolean {
    return completionsEnabled(vscode.workspace.getConfiguration("cadenza"));
  }

  update(): void {
    const { text, tooltip } = completionsStatus(this.enabled());
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.show();
  }

  async toggle(): Promise<void> {
    const config = vscode.workspace.getConfiguration("cadenza");
    const next = !completionsEnabled(config);
    await config.update(COMPLETIONS_SETTING, next, TARGETS[toggleScope(config.inspect(COMPLETIONS_SETTING))]);
    this.log(`inline completions turned ${next ? "on" : "off"}`);
    this.update();
  }

  /** A stopped server is started again by the next edit. */
  serverStopped(): void {
    this.startAsked = false;
  }

  private edited(event: vscode.TextDocumentChangeEvent): void {
    if (this.startAsked || event.contentChanges.length === 0 || event.document.uri.scheme !== "file") return;
    if (event.document !== vscode.window.activeTextEditor?.document || this.isRunning() || !this.enabled()) return;
    this.startAsked = true;
    this.log("starting the server for inline completions");
    this.ensureServer().catch((error: unknown) => this.log(`the server did not start for inline completions: ${String(error)}`));
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
