/**
 * What a person is told when a session's run stops: nothing while it waits (the server prompts
 * for the answer), else one end notification at a time, once the session's progress
 * notification is gone: a one-line summary (`endNotice`) with the buttons that apply (Show
 * Panel, Show Log, the end's fix such as Pull model); and "Answer…" for a declined question.
 */

import * as vscode from "vscode";

import { readSettings } from "./config";
import { saveDocuments } from "./edits";
import type { ExtensionHost } from "./host";
import { Notices } from "./notices";
import type { SessionEndUpdate } from "./protocol";
import { endNotice, isWaitingReason } from "./sessions";

export class SessionEnds {
  private readonly notices: Notices;

  /** @param reply answers a waiting session (Cadenza: Reply to Session…). */
  constructor(
    private readonly host: ExtensionHost,
    private readonly reply: (sessionId: string) => Promise<void>,
  ) {
    // An end shows once the progress notifications of ended sessions are off the screen.
    this.notices = new Notices(undefined, () => host.closings.settled());
  }

  async ended(sessionId: string, end: SessionEndUpdate): Promise<void> {
    this.host.progress.get(sessionId)?.dispose();
    this.host.progress.delete(sessionId);
    this.host.updateStatus();
    const session = this.host.store.get(sessionId);
    if (!session || this.host.replaying.has(sessionId)) return;
    if (isWaitingReason(end.stopReason)) {
      // Not over: the server prompts now (cadenza/askUser, cadenza/waitingHuman), and the
      // answer (or Reply… later) resumes the session.
      this.host.log(`session ${sessionId} waits: ${end.stopReason}${end.message ? `: ${end.message}` : ""}`);
      return;
    }
    this.host.log(`session ${sessionId} ended: ${end.stopReason}${end.message ? `: ${end.message}` : ""}`);
    void this.host.review.refresh(sessionId);
    const fix = end.fix && typeof end.fix.command === "string" ? end.fix : undefined;
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    if (settings.saveEdits === "onSessionEnd" && session.edited.length) {
      await saveDocuments(session.edited.map((p) => vscode.Uri.file(p).toString()));
    }
    const text = endNotice(end.stopReason, session.message ?? end.message);
    const reason = end.stopReason;
    // A turn sent from the panel's input ends in the panel the person looks at: no toast for a
    // normal end (errors and limits still get one).
    if (session.quiet && this.host.panel.visible && (reason === "end_turn" || reason === "cancelled")) return;
    // One end notification at a time (the latest replaces one still waiting): several sessions
    // ending together no longer pile up toasts; the panel shows every end.
    this.notices.show(async () => {
      const showPanel = "Show Panel";
      let choice: string | undefined;
      switch (reason) {
        case "end_turn":
        case "cancelled":
          choice = await vscode.window.showInformationMessage(text, showPanel);
          break;
        case "max_steps":
          choice = await vscode.window.showWarningMessage(text, showPanel);
          break;
        default:
          choice = await vscode.window.showErrorMessage(text, ...(fix ? [fix.title] : []), showPanel, "Show Log");
          if (choice === "Show Log") this.host.output.show(true);
          if (fix && choice === fix.title) await this.host.chat.runFix(sessionId, fix);
      }
      if (choice === showPanel) await this.host.panel.reveal();
    });
  }

  /**
   * A waiting session's question was declined (Escape in the input box): the session keeps
   * waiting; "Answer…" answers it now with `cadenza.replySession`.
   */
  async offerAnswer(sessionId: string): Promise<void> {
    const session = this.host.store.get(sessionId);
    if (!session || session.state !== "waiting") return;
    const answer = "Answer…";
    const showPanel = "Show Panel";
    const text = session.question ? `Cadenza needs your input: ${session.question}` : endNotice(session.stopReason ?? "", session.message);
    const choice = await vscode.window.showWarningMessage(text, answer, showPanel);
    if (choice === answer) await this.reply(sessionId);
    else if (choice === showPanel) await this.host.panel.reveal();
  }
}
