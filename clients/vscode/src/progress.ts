/**
 * A session's work-done progress as VS Code's notification progress with a Cancel button.
 *
 * The extension gives `cadenza.startSession` its own `workDoneToken` (client-initiated progress,
 * docs/protocol.md), so the server's `$/progress` for the session arrives here rather than in
 * vscode-languageclient's default handler (which shows progress in the status bar only, without
 * Cancel). Cancel sends `window/workDoneProgress/cancel` for the token: the server ends the
 * session with `cancelled`.
 *
 * The notification reads the person's task as they typed it (`label`), not the server's `begin`
 * message (the task with the editor context added for the model), then the server's reports
 * after it ("Add type hints — work · step 2/25"). VS Code keeps a progress notification on
 * screen for a while after its task ends; `closed` resolves once it is gone, and the session's
 * end notification waits for it (`Closings`).
 */

import { randomUUID } from "node:crypto";
import * as vscode from "vscode";
import {
  type LanguageClient,
  WorkDoneProgress,
  type WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from "vscode-languageclient/node";

import { type Closings, progressGoneIn } from "./notices";

type Value = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/** The notification's text: the task, then the server's latest report. */
export function progressText(label: string, report: string | undefined): string {
  if (!report) return label;
  return label ? `${label} — ${report}` : report;
}

export class SessionProgress implements vscode.Disposable {
  readonly token = `vscode-cadenza-${randomUUID()}`;
  sessionId: string | undefined;
  /** Resolves once the notification is off the screen (at once when it never showed). */
  closed: Promise<void> = Promise.resolve();
  private report: vscode.Progress<{ message?: string }> | undefined;
  private finish: (() => void) | undefined;
  private subscription: vscode.Disposable | undefined;
  private ended = false;
  private pending: string | undefined;
  private shownAt: number | undefined;

  /**
   * @param label the person's task, shortened (`taskLabel`).
   * @param closings where the closing notification is tracked until it is gone.
   */
  constructor(
    private readonly client: LanguageClient,
    private readonly label: string,
    private readonly closings: Closings,
    private readonly onMessage: (sessionId: string | undefined, message: string | undefined) => void,
    private readonly onCancel: (sessionId: string | undefined) => void,
  ) {
    this.subscription = client.onProgress(WorkDoneProgress.type, this.token, (value) => this.handle(value as Value));
  }

  private handle(value: Value): void {
    if (this.ended) return;
    switch (value.kind) {
      case "begin":
        this.begin(value);
        break;
      case "report":
        if (value.message) {
          const text = progressText(this.label, value.message);
          if (this.report) this.report.report({ message: text });
          else this.pending = text;
          this.onMessage(this.sessionId, value.message);
        }
        break;
      case "end":
        this.onMessage(this.sessionId, value.message);
        this.dispose();
        break;
    }
  }

  private begin(value: WorkDoneProgressBegin): void {
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: value.title || "Cadenza",
        cancellable: value.cancellable !== false,
      },
      (progress, cancellation) => {
        this.shownAt = Date.now();
        this.report = progress;
        progress.report({ message: this.pending ?? progressText(this.label, undefined) });
        cancellation.onCancellationRequested(() => this.cancel());
        return new Promise<void>((resolve) => {
          this.finish = resolve;
          if (this.ended) resolve();
        });
      },
    );
  }

  /** Ask the server to cancel the session through its progress token. */
  cancel(): void {
    if (this.ended) return;
    this.onCancel(this.sessionId);
    void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token: this.token }).catch(() => {
      // the server is gone: its sessions are over anyway
    });
  }

  /** Close the notification (at `end`, `session_end`, or when the server stops). */
  dispose(): void {
    if (!this.ended) {
      this.ended = true;
      const wait = progressGoneIn(this.shownAt, Date.now());
      if (wait > 0) {
        this.closed = new Promise((resolve) => setTimeout(resolve, wait));
        this.closings.add(this.closed);
      }
    }
    this.finish?.();
    this.subscription?.dispose();
    this.subscription = undefined;
  }
}
