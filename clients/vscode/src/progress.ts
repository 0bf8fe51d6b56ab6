/**
 * A session's work-done progress as VS Code's notification progress with a Cancel button.
 *
 * The extension gives `cadenza.startSession` its own `workDoneToken` (client-initiated progress,
 * docs/protocol.md), so the server's `$/progress` for the session arrives here rather than in
 * vscode-languageclient's default handler (which shows progress in the status bar only, without
 * Cancel). Cancel sends `window/workDoneProgress/cancel` for the token: the server ends the
 * session with `cancelled`.
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

type Value = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export class SessionProgress implements vscode.Disposable {
  readonly token = `vscode-cadenza-${randomUUID()}`;
  sessionId: string | undefined;
  private report: vscode.Progress<{ message?: string }> | undefined;
  private finish: (() => void) | undefined;
  private subscription: vscode.Disposable | undefined;
  private ended = false;
  private pending: string | undefined;

  constructor(
    private readonly client: LanguageClient,
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
          if (this.report) this.report.report({ message: value.message });
          else this.pending = value.message;
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
        this.report = progress;
        progress.report({ message: this.pending ?? value.message });
        cancellation.onCancellationRequested(() => this.cancel());
        return new Promise<void>((resolve) => {
          this.finish = resolve;
          if (this.ended) resolve();
        });
      },
    );
    this.onMessage(this.sessionId, value.message);
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
    this.ended = true;
    this.finish?.();
    this.subscription?.dispose();
    this.subscription = undefined;
  }
}
