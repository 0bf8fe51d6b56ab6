/**
 * Cadenza for VS Code: the palette commands, the panel, progress and prompts, on top of
 * `cadenza serve` through vscode-languageclient.
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { ApplyWorkspaceEditRequest, ExecuteCommandRequest, type LanguageClient } from "vscode-languageclient/node";

import { RESTART_KEYS, readSettings, sessionArguments } from "./config";
import { describeContext, relativePath, taskWithContext, type EditorContext } from "./context";
import { DIFF_SCHEME, DiffContentProvider, openDiff } from "./diff";
import { applyEditHandler, saveDocuments } from "./edits";
import { errorText, isUnsupportedCommand, unsupportedMessage } from "./errors";
import { PANEL_VIEW_ID, PanelProvider, type PanelMessage } from "./panel";
import { SessionProgress } from "./progress";
import { askUser, requestPermission, waitingHuman } from "./prompts";
import {
  ASK_USER,
  CANCEL_SESSION,
  LIST_SESSIONS,
  REQUEST_PERMISSION,
  SESSION_UPDATE,
  START_SESSION,
  UNDO_SESSION,
  WAITING_HUMAN,
  type SessionEndUpdate,
  type SessionUpdateParams,
  type StartSessionResult,
} from "./protocol";
import { ServerManager } from "./server";
import { SessionStore, describeStopReason, endNotice, undoSummary, type SessionView } from "./sessions";

class Cadenza implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel("Cadenza");
  readonly store = new SessionStore();
  readonly panel: PanelProvider;
  readonly server: ServerManager;
  private readonly progress = new Map<string, SessionProgress>(); // by sessionId
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly context: vscode.ExtensionContext) {
    this.panel = new PanelProvider(context.extensionUri, this.store, (m) => void this.onPanelMessage(m));
    this.server = new ServerManager(this.output, (client) => this.installHandlers(client));
    this.status.command = `${PANEL_VIEW_ID}.focus`;
    this.disposables.push(
      this.output,
      this.status,
      this.panel,
      this.server,
      this.server.onDidStop((why) => this.serverStopped(why)),
      vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, this.panel, {
        webviewOptions: { retainContextWhenHidden: true },
      }),
      vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, new DiffContentProvider(this.store)),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      vscode.commands.registerCommand("cadenza.runTask", (task?: unknown) => this.runTask(task)),
      vscode.commands.registerCommand("cadenza.cancel", (id?: unknown) => this.cancel(id)),
      vscode.commands.registerCommand("cadenza.undo", (id?: unknown) => this.undo(id)),
      vscode.commands.registerCommand("cadenza.showSessions", () => this.showSessions()),
      vscode.commands.registerCommand("cadenza.restartServer", () => this.restart()),
      vscode.commands.registerCommand("cadenza.showLog", () => this.output.show(true)),
      vscode.commands.registerCommand("cadenza.clearPanel", () => {
        this.store.clearEnded();
        this.changed();
      }),
    );
    this.updateStatus();
  }

  log(line: string): void {
    this.output.appendLine(`[${new Date().toISOString()}] ${line}`);
  }

  private changed(): void {
    this.panel.refresh();
    this.updateStatus();
  }

  private updateStatus(): void {
    const running = this.store.running();
    void vscode.commands.executeCommand("setContext", "cadenza.running", running.length > 0);
    if (running.length === 0) {
      this.status.hide();
      return;
    }
    this.status.text = `$(loading~spin) Cadenza${running.length > 1 ? ` (${running.length})` : ""}`;
    this.status.tooltip = running.map((s) => `${s.task.split("\n")[0]}${s.progress ? ` — ${s.progress}` : ""}`).join("\n");
    this.status.show();
  }

  // ---- server → client -------------------------------------------------------------------

  private installHandlers(client: LanguageClient): vscode.Disposable[] {
    const changed = () => this.changed();
    return [
      client.onNotification(SESSION_UPDATE, (params: SessionUpdateParams) => this.onSessionUpdate(params)),
      client.onRequest(ASK_USER, (params, token) => askUser(params, token, this.store, changed)),
      client.onRequest(REQUEST_PERMISSION, (params, token) => requestPermission(params, token, this.store, changed)),
      client.onRequest(WAITING_HUMAN, (params, token) => waitingHuman(params, token, this.store, changed)),
      client.onRequest(ApplyWorkspaceEditRequest.type, applyEditHandler(client, (line) => this.log(line))),
    ];
  }

  private onSessionUpdate(params: SessionUpdateParams): void {
    if (!params || typeof params.sessionId !== "string" || !params.update) return;
    const end = this.store.apply(params.sessionId, params.update);
    this.changed();
    if (end) void this.sessionEnded(params.sessionId, end);
  }

  private async sessionEnded(sessionId: string, end: SessionEndUpdate): Promise<void> {
    this.progress.get(sessionId)?.dispose();
    this.progress.delete(sessionId);
    this.updateStatus();
    const session = this.store.get(sessionId);
    if (!session) return;
    this.log(`session ${sessionId} ended: ${end.stopReason}${end.message ? `: ${end.message}` : ""}`);
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    if (settings.saveEdits === "onSessionEnd" && session.edited.length) {
      await saveDocuments(session.edited.map((p) => vscode.Uri.file(p).toString()));
    }
    const text = endNotice(end.stopReason, end.message);
    const showPanel = "Show Panel";
    let choice: string | undefined;
    switch (end.stopReason) {
      case "end_turn":
      case "cancelled":
        choice = await vscode.window.showInformationMessage(text, showPanel);
        break;
      case "needs_user_input": {
        const answer = "Answer…";
        const needs = end.missingInfo ? `Cadenza needs your input: ${end.missingInfo}` : text;
        choice = await vscode.window.showWarningMessage(needs, answer, showPanel);
        if (choice === answer) await this.answerAndRerun(session, end);
        break;
      }
      case "waiting_human":
      case "max_steps":
        choice = await vscode.window.showWarningMessage(text, showPanel);
        break;
      default:
        choice = await vscode.window.showErrorMessage(text, showPanel, "Show Log");
        if (choice === "Show Log") this.output.show(true);
    }
    if (choice === showPanel) await this.panel.reveal();
  }

  /** `needs_user_input`: the server cannot resume a session yet, so a new one gets the answer. */
  private async answerAndRerun(session: SessionView, end: SessionEndUpdate): Promise<void> {
    const question = end.missingInfo ?? end.message ?? "What is missing?";
    const answer = await vscode.window.showInputBox({
      title: "Cadenza needs your input",
      prompt: end.whyNoDefault ? `${question} (${end.whyNoDefault})` : question,
      ignoreFocusOut: true,
    });
    if (!answer?.trim()) return;
    const task = `${session.task}\n\nAnswer to "${question}": ${answer.trim()}`;
    await this.start(task, session.root ? vscode.Uri.file(session.root) : undefined);
  }

  private serverStopped(why: string): void {
    for (const session of this.store.running()) {
      this.store.abandon(session.id, why);
      this.progress.get(session.id)?.dispose();
      this.progress.delete(session.id);
    }
    this.changed();
  }

  // ---- commands -------------------------------------------------------------------------

  private editorContext(): { context?: EditorContext; folder?: vscode.WorkspaceFolder } {
    const editor = vscode.window.activeTextEditor;
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (!editor || editor.document.uri.scheme !== "file") return { folder: folders[0] };
    const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri) ?? folders[0];
    const file = editor.document.uri.fsPath;
    const context: EditorContext = {
      path: relativePath(folder?.uri.fsPath, file),
      languageId: editor.document.languageId,
      cursorLine: editor.selection.active.line + 1,
    };
    const selection = editor.selection;
    if (!selection.isEmpty) {
      // A selection ending at column 0 of a line does not include that line.
      const endLine = selection.end.character === 0 && selection.end.line > selection.start.line
        ? selection.end.line - 1
        : selection.end.line;
      context.selection = {
        text: editor.document.getText(selection),
        startLine: selection.start.line + 1,
        endLine: endLine + 1,
      };
    }
    return { context, folder };
  }

  private async runTask(given?: unknown): Promise<void> {
    const { context, folder } = this.editorContext();
    let task = typeof given === "string" ? given : undefined;
    if (!task) {
      task = await vscode.window.showInputBox({
        title: "Cadenza: Run Task",
        prompt: describeContext(context),
        placeHolder: "What should Cadenza do? e.g. Add type hints to calc_total",
        ignoreFocusOut: true,
      });
    }
    if (!task?.trim()) return;
    await this.start(taskWithContext(task, context), folder?.uri);
  }

  private async start(task: string, rootUri: vscode.Uri | undefined): Promise<void> {
    if (!rootUri && !vscode.workspace.workspaceFolders?.length) {
      void vscode.window.showErrorMessage("Cadenza works on a folder: open one first (File › Open Folder…).");
      return;
    }
    let client: LanguageClient;
    try {
      client = await this.server.ensure();
    } catch (error) {
      const settings = "Open Settings";
      const choice = await vscode.window.showErrorMessage(errorText(error instanceof Error ? error.message : error), settings, "Show Log");
      if (choice === settings) await vscode.commands.executeCommand("workbench.action.openSettings", "cadenza.server");
      else if (choice === "Show Log") this.output.show(true);
      return;
    }
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    const args = sessionArguments(settings, task, rootUri?.toString());
    // Reveal before starting: revealing later would hide a refactor preview (review mode) that
    // shares the bottom panel, and VS Code discards a preview that gets hidden.
    if (settings.revealOnRun) await this.panel.reveal();
    const progress = new SessionProgress(
      client,
      (id, message) => {
        if (id) {
          this.store.progress(id, message);
          this.changed();
        }
      },
      (id) => {
        const session = id ? this.store.get(id) : undefined;
        if (session && session.state !== "ended") session.state = "cancelling";
        this.changed();
      },
    );
    let result: StartSessionResult;
    try {
      result = await client.sendRequest(ExecuteCommandRequest.type, {
        command: START_SESSION,
        arguments: [args],
        workDoneToken: progress.token,
      });
    } catch (error) {
      progress.dispose();
      this.log(`${START_SESSION} failed: ${errorText(error)}`);
      void vscode.window.showErrorMessage(`Cadenza could not start the task: ${errorText(error)}`);
      return;
    }
    if (!result || typeof result.sessionId !== "string") {
      progress.dispose();
      void vscode.window.showErrorMessage(`Cadenza: the server answered ${START_SESSION} without a sessionId.`);
      return;
    }
    const session = this.store.add(result.sessionId, { task, root: rootUri?.fsPath });
    progress.sessionId = session.id;
    if (session.state === "ended") progress.dispose();
    else this.progress.set(session.id, progress);
    this.log(`session ${session.id} started: ${task.split("\n")[0]}`);
    this.changed();
  }

  private async pickSession(
    sessions: SessionView[],
    placeHolder: string,
  ): Promise<SessionView | undefined> {
    if (sessions.length <= 1) return sessions[0];
    const items = [...sessions].reverse().map((s) => ({
      label: s.task.split("\n")[0] || s.id,
      description: s.state === "ended" ? describeStopReason(s.stopReason ?? "") : (s.progress ?? s.state),
      detail: s.id,
      session: s,
    }));
    return (await vscode.window.showQuickPick(items, { placeHolder }))?.session;
  }

  private async cancel(given?: unknown): Promise<void> {
    const running = this.store.running();
    const session =
      typeof given === "string"
        ? this.store.get(given)
        : await this.pickSession(running, "Which session should stop?");
    if (!session) {
      void vscode.window.showInformationMessage("Cadenza: no task is running.");
      return;
    }
    const client = this.server.current;
    if (!client) return;
    try {
      const result = await client.sendRequest(ExecuteCommandRequest.type, {
        command: CANCEL_SESSION,
        arguments: [{ sessionId: session.id }],
      });
      if (session.state !== "ended") session.state = "cancelling";
      this.changed();
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
      client = await this.server.ensure();
    } catch (error) {
      void vscode.window.showErrorMessage(errorText(error instanceof Error ? error.message : error));
      return undefined;
    }
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] });
    } catch (error) {
      this.log(`${command} failed: ${errorText(error)}`);
      if (isUnsupportedCommand(error, command, this.server.advertisedCommands())) {
        return { unsupported: unsupportedMessage(what, command, error) };
      }
      void vscode.window.showErrorMessage(`Cadenza: ${what} failed: ${errorText(error)}`);
      return undefined;
    }
  }

  private async undo(given?: unknown): Promise<void> {
    const ended = this.store.list().filter((s) => s.state === "ended" && s.edited.length > 0);
    const session =
      typeof given === "string" ? this.store.get(given) : await this.pickSession(ended, "Undo which session's edits?");
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
    this.store.note(sessionId, text);
    this.changed();
    void vscode.window.showInformationMessage(`Cadenza: ${text}`);
  }

  private async showSessions(): Promise<void> {
    const result = await this.optionalCommand("Show Sessions", LIST_SESSIONS, {});
    let items: { label: string; description?: string; detail?: string; id?: string }[];
    let title = "Cadenza sessions";
    if (result && typeof result === "object" && "unsupported" in result) {
      void vscode.window.showWarningMessage(
        `${(result as { unsupported: string }).unsupported} Listing this window's sessions instead.`,
      );
      title = "Cadenza sessions of this window (the server cannot list sessions yet)";
      items = this.localSessionItems();
    } else if (result === undefined) {
      return;
    } else {
      const list = Array.isArray(result) ? result : ((result as { sessions?: unknown[] }).sessions ?? []);
      items = (list as Record<string, unknown>[]).map((s) => ({
        label: String(s.task ?? s.sessionId ?? "?").split("\n")[0],
        description: String(s.state ?? s.stopReason ?? ""),
        detail: String(s.sessionId ?? ""),
        id: typeof s.sessionId === "string" ? s.sessionId : undefined,
      }));
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage("Cadenza: no sessions yet.");
      return;
    }
    const picked = await vscode.window.showQuickPick(items, { title, placeHolder: "Pick a session to show it in the panel" });
    if (picked) await this.panel.reveal();
  }

  private localSessionItems() {
    return [...this.store.list()].reverse().map((s) => ({
      label: s.task.split("\n")[0] || s.id,
      description: s.state === "ended" ? describeStopReason(s.stopReason ?? "") : (s.progress ?? s.state),
      detail: `${s.id}${s.edited.length ? ` · edited ${s.edited.map((p) => path.basename(p)).join(", ")}` : ""}`,
      id: s.id,
    }));
  }

  private async restart(): Promise<void> {
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "Restarting the Cadenza server" },
        () => this.server.restart(),
      );
      void vscode.window.showInformationMessage("Cadenza: the server restarted.");
    } catch (error) {
      void vscode.window.showErrorMessage(errorText(error instanceof Error ? error.message : error));
    }
  }

  private configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration("cadenza")) return;
    const s = readSettings(vscode.workspace.getConfiguration("cadenza"));
    this.log(
      `settings changed: model ${s.model || "(server's)"}, workflow ${s.workflow || "default"}, ` +
        `reviewMode ${s.reviewMode}, saveEdits ${s.saveEdits}, permissions ${s.permissionsDefault}`,
    );
    if (!this.server.current || !RESTART_KEYS.some((key) => event.affectsConfiguration(key))) return;
    void vscode.window
      .showInformationMessage("Cadenza: restart the server to apply the new settings?", "Restart")
      .then((choice) => (choice === "Restart" ? this.restart() : undefined));
  }

  private async onPanelMessage(message: PanelMessage): Promise<void> {
    switch (message?.type) {
      case "openDiff":
        await openDiff(this.store, message.diffId);
        break;
      case "openFile":
        await vscode.window.showTextDocument(vscode.Uri.file(message.path), { preview: true });
        break;
      case "cancel": {
        const progress = this.progress.get(message.sessionId);
        if (progress) progress.cancel();
        else await this.cancel(message.sessionId);
        break;
      }
      case "run":
        await this.runTask();
        break;
    }
  }

  dispose(): void {
    for (const p of this.progress.values()) p.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

let instance: Cadenza | undefined;

export function activate(context: vscode.ExtensionContext): void {
  instance = new Cadenza(context);
  context.subscriptions.push(instance);
}

export async function deactivate(): Promise<void> {
  await instance?.server.stop();
  instance = undefined;
}
