/**
 * The status bar item: spins while sessions run, rings while one waits for the person (a click
 * opens the panel, or Reply… when only waiting sessions are left); hidden otherwise.
 */

import * as vscode from "vscode";

import { PANEL_VIEW_ID } from "./panel";
import { describeState, type SessionStore } from "./sessions";

export class StatusBar implements vscode.Disposable {
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);

  constructor(private readonly store: SessionStore) {
    this.status.command = `${PANEL_VIEW_ID}.focus`;
  }

  update(): void {
    const running = this.store.running();
    const waiting = this.store.waiting();
    void vscode.commands.executeCommand("setContext", "cadenza.running", running.length + waiting.length > 0);
    void vscode.commands.executeCommand("setContext", "cadenza.waiting", waiting.length > 0);
    if (running.length === 0 && waiting.length === 0) {
      this.status.hide();
      return;
    }
    const lines = [...running, ...waiting].map((s) => `${s.task.split("\n")[0]} — ${describeState(s)}`);
    if (running.length > 0) {
      this.status.text = `$(loading~spin) Cadenza${running.length > 1 ? ` (${running.length})` : ""}`;
      if (waiting.length > 0) this.status.text += ` $(bell) ${waiting.length}`;
      this.status.command = `${PANEL_VIEW_ID}.focus`;
    } else {
      this.status.text = `$(bell) Cadenza waits for you${waiting.length > 1 ? ` (${waiting.length})` : ""}`;
      this.status.command = "cadenza.reply";
    }
    this.status.tooltip = lines.join("\n");
    this.status.show();
  }

  dispose(): void {
    this.status.dispose();
  }
}
