/**
 * The palette commands on sessions: Cancel, Undo Session, Show Sessions (with the history of
 * the one picked replayed into the panel: `cadenza.loadSession`) and Reply to Session…, each
 * working with servers that lack the command (a message says what to do instead).
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { ExecuteCommandRequest, type LanguageClient } from "vscode-languageclient/node";

import { errorText, isUnsupportedCommand, unsupportedMessage } from "./errors";
import type { ExtensionHost } from "./host";
import {
  CANCEL_SESSION,
  LIST_SESSIONS,
  LOAD_SESSION,
  REPLY_SESSION,
  UNDO_SESSION,
  type LoadSessionResult,
  type ReplySessionResult,
  type SessionInfo,
} from "./protocol";
import { describeState, isWaitingReason, replyPrompt, sessionItems, undoSummary, type SessionView } from "./sessions";
import { serverFailed } from "./starting";

export class SessionCommands {
  constructor(private readonly host: ExtensionHost) {}

  private async pickSession(
    sessions: SessionView[],
    placeHolder: string,
  ): Promise<SessionView | undefined> {
    if (sessions.length <= 1) return sessions[0];
    const items = [...sessions].reverse().map((s) => ({
      label: s.task.split("\n")[0] || s.id,
      description: describeState(s),
      detail: s.question ? `${s.id} · ${s.question}` : s.id,
      session: s,
    }));
    return (await vscode.window.showQuickPick(items, { placeHolder }))?.session;
  }

  async cancel(given?: unknown): Promise<void> {
    const active = this.host.store.active();
    const session =
      typeof given === "string"
        ? this.host.store.get(given)
        : await this.pickSession(active, "Which session should stop?");
    if (!session) {
      void vscode.window.showInformationMessage("Cadenza: no task is running.");
      return;
    }
    const client = this.host.server.current;
    if (!client) return;
    try {
      const result = await client.sendRequest(ExecuteCommandRequest.type, {
        command: CANCEL_SESSION,
        arguments: [{ sessionId: session.id }],
      });
      if (session.state === "running" || session.state === "starting") session.state = "cancelling";
      this.host.changed();
      if (!(result as { cancelled?: boolean })?.cancelled) {
        void vscode.window.showInformationMessage("Cadenza: that session had already ended.");
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Cadenza could not cancel: ${errorText(error)}`);
    }
  }

  /** Run a server command that may not exist yet; undefined (after a message) when it fails. */
  private async optionalCommand(what: string, command: string, argument: object): Promise<unknown> {
    let client: LanguageClient;
    try {
      client = await this.host.server.ensure();
    } catch (error) {
      void serverFailed(this.host.output, error);
      return undefined;
    }
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] });
    } catch (error) {
      this.host.log(`${command} failed: ${errorText(error)}`);
      if (isUnsupportedCommand(error, command, this.host.server.advertisedCommands())) {
        return { unsupported: unsupportedMessage(what, command, error) };
      }
      void vscode.window.showErrorMessage(`Cadenza: ${what} failed: ${errorText(error)}`);
      return undefined;
    }
  }

  async undo(given?: unknown): Promise<void> {
    const ended = this.host.store.list().filter((s) => s.state === "ended" && s.edited.length > 0);
    const session =
      typeof given === "string" ? this.host.store.get(given) : await this.pickSession(ended, "Undo which session's edits?");
    const sessionId = session?.id ?? (typeof given === "string" ? given : undefined);
    if (!sessionId) {
      void vscode.window.showInformationMessage("Cadenza: no session of this window changed files.");
      return;
    }
    const result = await this.optionalCommand("Undo Session", UNDO_SESSION, { sessionId });
    if (result && typeof result === "object" && "unsupported" in result) {
      void vscode.window.showWarningMessage(
        `${(result as { unsupported: string }).unsupported} Undo the agent's edits in each file with Ctrl+Z (Cmd+Z).`,
      );
      return;
    }
    if (result === undefined) return;
    const text = undoSummary(result);
    this.host.store.note(sessionId, text);
    this.host.changed();
    void vscode.window.showInformationMessage(`Cadenza: ${text}`);
  }

  async showSessions(): Promise<void> {
    const result = await this.optionalCommand("Show Sessions", LIST_SESSIONS, {});
    if (result === undefined) return;
    if (typeof result === "object" && result !== null && "unsupported" in result) {
      void vscode.window.showWarningMessage(
        `${(result as { unsupported: string }).unsupported} Listing this window's sessions instead.`,
      );
      const items = this.localSessionItems();
      if (items.length === 0) {
        void vscode.window.showInformationMessage("Cadenza: no sessions yet.");
        return;
      }
      const picked = await vscode.window.showQuickPick(items, {
        title: "Cadenza sessions of this window (the server cannot list sessions yet)",
        placeHolder: "Pick a session to show it in the panel",
      });
      if (picked) await this.host.panel.reveal();
      return;
    }
    const items = sessionItems(result);
    if (items.length === 0) {
      void vscode.window.showInformationMessage("Cadenza: no sessions yet.");
      return;
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: "Cadenza sessions",
      placeHolder: "Pick a session to show its history in the panel",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (picked) await this.loadSession(picked.info);
  }

  /** `cadenza.loadSession`: the session's history replayed into the panel (a waiting one prompts again). */
  private async loadSession(info: SessionInfo): Promise<void> {
    const id = info.sessionId;
    this.host.replaying.add(id);
    this.host.store.reset(id, { task: info.task, root: info.root || undefined, model: info.model || undefined });
    this.host.chat.focus(id);
    this.host.changed();
    await this.host.panel.reveal();
    let result: unknown;
    try {
      result = await this.optionalCommand("Load Session", LOAD_SESSION, { sessionId: id });
    } finally {
      this.host.replaying.delete(id);
    }
    if (result === undefined) return;
    if (typeof result === "object" && result !== null && "unsupported" in result) {
      void vscode.window.showWarningMessage((result as { unsupported: string }).unsupported);
      return;
    }
    const loaded = (result as Partial<LoadSessionResult>).session;
    this.host.store.settle(id, loaded?.state ?? info.state, loaded?.question ?? info.question);
    this.host.log(`session ${id} loaded: ${(result as Partial<LoadSessionResult>).updates ?? "?"} updates, ${loaded?.state ?? info.state}`);
    this.host.changed();
  }

  /**
   * Cadenza: Reply to Session… (and the panel's Reply… / Continue, and Answer…): resume a
   * session that waits for the person with `cadenza.replySession {sessionId, text}`.
   *
   * @param given a session id, or `{sessionId, text?}`; nothing: pick among the waiting
   *   sessions of this window, else among those the server lists as waiting.
   */
  async reply(given?: unknown): Promise<void> {
    let sessionId = typeof given === "string" ? given : undefined;
    let text: string | undefined;
    if (given && typeof given === "object") {
      const arg = given as { sessionId?: unknown; text?: unknown };
      if (typeof arg.sessionId === "string") sessionId = arg.sessionId;
      if (typeof arg.text === "string") text = arg.text;
    }
    let session = sessionId ? this.host.store.get(sessionId) : undefined;
    if (!sessionId) {
      session = await this.pickWaiting();
      if (!session) return;
      sessionId = session.id;
    }
    if (text === undefined) {
      const prompt = replyPrompt(session);
      text = await vscode.window.showInputBox({
        title: `Cadenza: Reply to Session${session?.task ? ` (${session.task.split("\n")[0].slice(0, 60)})` : ""}`,
        prompt: prompt.prompt,
        placeHolder: prompt.placeHolder,
        ignoreFocusOut: true,
      });
      if (text === undefined || (prompt.required && !text.trim())) return;
    }
    const result = await this.optionalCommand("Reply to Session", REPLY_SESSION, { sessionId, text });
    if (result === undefined) return;
    if (typeof result === "object" && result !== null && "unsupported" in result) {
      void vscode.window.showWarningMessage((result as { unsupported: string }).unsupported);
      return;
    }
    const reply = result as Partial<ReplySessionResult>;
    this.host.log(`session ${sessionId} replied: resumed ${reply.resumed}, ${reply.state}`);
  }

  /** A waiting session: this window's, else one the server lists as waiting; undefined after a message. */
  private async pickWaiting(): Promise<SessionView | undefined> {
    const local = this.host.store.waiting();
    if (local.length > 0) return this.pickSession(local, "Reply to which session?");
    const result = await this.optionalCommand("Reply to Session", LIST_SESSIONS, {});
    if (result === undefined) return undefined;
    const items = sessionItems(result).filter((item) => isWaitingReason(item.info.state));
    if (items.length === 0) {
      void vscode.window.showInformationMessage("Cadenza: no session waits for an answer.");
      return undefined;
    }
    const picked = items.length === 1 ? items[0] : await vscode.window.showQuickPick(items, { placeHolder: "Reply to which session?" });
    if (!picked) return undefined;
    const info = picked.info;
    return this.host.store.add(info.sessionId, {
      task: info.task,
      root: info.root || undefined,
      state: "waiting",
      stopReason: info.state,
      question: info.question,
    });
  }

  private localSessionItems() {
    return [...this.host.store.list()].reverse().map((s) => ({
      label: s.task.split("\n")[0] || s.id,
      description: describeState(s),
      detail: `${s.id}${s.edited.length ? ` · edited ${s.edited.map((p) => path.basename(p)).join(", ")}` : ""}`,
      id: s.id,
    }));
  }
}
