/**
 * Cadenza for VS Code: the palette commands, the panel, progress and prompts, on top of
 * `cadenza serve` through vscode-languageclient.
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { ApplyWorkspaceEditRequest, ExecuteCommandRequest, WorkDoneProgress, type LanguageClient } from "vscode-languageclient/node";

import { RESTART_KEYS, readSettings, sessionArguments, type SessionArguments } from "./config";
import { describeContext, relativePath, taskWithContext, type EditorContext } from "./context";
import { DIFF_SCHEME, DiffContentProvider, openDiff } from "./diff";
import { applyEditHandler, saveDocuments } from "./edits";
import { errorText, isUnsupportedCommand, unsupportedMessage } from "./errors";
import { PANEL_VIEW_ID, PanelProvider, openableLink, type PanelMessage } from "./panel";
import { Notices } from "./notices";
import { SessionProgress } from "./progress";
import { installIntel } from "./intel";
import { askUser, requestPermission, waitingHuman, type PromptHost } from "./prompts";
import {
  ASK_USER,
  CANCEL_SESSION,
  LIST_SESSIONS,
  LOAD_SESSION,
  REPLY_SESSION,
  REQUEST_PERMISSION,
  SESSION_UPDATE,
  START_SESSION,
  UNDO_SESSION,
  WAITING_HUMAN,
  type LoadSessionResult,
  type ReplySessionResult,
  type SessionEndUpdate,
  type SessionInfo,
  type SessionUpdateParams,
  type StartSessionResult,
} from "./protocol";
import { ServerManager } from "./server";
import { Chat } from "./chat";
import { ReviewController } from "./review";
import {
  SessionStore,
  describeState,
  endNotice,
  isWaitingReason,
  replyPrompt,
  sessionItems,
  undoSummary,
  type SessionView,
} from "./sessions";

class Cadenza implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel("Cadenza");
  readonly store = new SessionStore();
  readonly panel: PanelProvider;
  readonly server: ServerManager;
  private readonly progress = new Map<string, SessionProgress>(); // by sessionId
  /** Sessions whose history `cadenza.loadSession` is replaying: no notifications for them. */
  private readonly replaying = new Set<string>();
  private readonly notices = new Notices();
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [];
  readonly chat: Chat;
  readonly review: ReviewController;
  private modelsListed: LanguageClient | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.panel = new PanelProvider(context.extensionUri, this.store, (m) => void this.onPanelMessage(m), () => this.chat.state());
    this.server = new ServerManager(this.output, (client) => this.installHandlers(client));
    const execute = (command: string, argument: object, workDoneToken?: string) => this.execute(command, argument, workDoneToken);
    const host = { store: this.store, changed: () => this.changed(), log: (line: string) => this.log(line), advertised: () => this.server.advertisedCommands() };
    this.review = new ReviewController({ ...host, execute });
    this.chat = new Chat({
      ...host,
      execute,
      start: (task, options) => this.startFromPanel(task, options),
      reply: (sessionId, text) => this.reply({ sessionId, text }),
      settings: () => {
        const s = readSettings(vscode.workspace.getConfiguration("cadenza"));
        return { model: s.model, workflow: s.workflow };
      },
      runWithProgress: (title, command, argument) => this.runWithProgress(title, command, argument),
    });
    this.disposables.push(this.review);
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
      vscode.commands.registerCommand("cadenza.reply", (arg?: unknown) => this.reply(arg)),
      vscode.commands.registerCommand("cadenza.showSessions", () => this.showSessions()),
      vscode.commands.registerCommand("cadenza.restartServer", () => this.restart()),
      vscode.commands.registerCommand("cadenza.showLog", () => this.output.show(true)),
      vscode.commands.registerCommand("cadenza.clearPanel", () => {
        this.store.clearEnded();
        this.changed();
      }),
      vscode.commands.registerCommand("cadenza.newSession", () => this.chat.newSession()),
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

  // ---- server → client -------------------------------------------------------------------

  private installHandlers(client: LanguageClient): vscode.Disposable[] {
    const host: PromptHost = {
      store: this.store,
      changed: () => this.changed(),
      answerLater: (sessionId) => void this.offerAnswer(sessionId),
    };
    return [
      client.onNotification(SESSION_UPDATE, (params: SessionUpdateParams) => this.onSessionUpdate(params)),
      client.onRequest(ASK_USER, (params, token) => askUser(params, token, host)),
      client.onRequest(REQUEST_PERMISSION, (params, token) => requestPermission(params, token, host)),
      client.onRequest(WAITING_HUMAN, (params, token) => waitingHuman(params, token, host)),
      client.onRequest(ApplyWorkspaceEditRequest.type, applyEditHandler(client, (line) => this.log(line))),
      ...installIntel(client),
    ];
  }

  private onSessionUpdate(params: SessionUpdateParams): void {
    if (!params || typeof params.sessionId !== "string" || !params.update) return;
    if (params.update.sessionUpdate === "session_resume") this.review.forget(params.sessionId);
    const end = this.store.apply(params.sessionId, params.update);
    this.changed();
    if (end) void this.sessionEnded(params.sessionId, end);
  }

  private async sessionEnded(sessionId: string, end: SessionEndUpdate): Promise<void> {
    this.progress.get(sessionId)?.dispose();
    this.progress.delete(sessionId);
    this.updateStatus();
    const session = this.store.get(sessionId);
    if (!session || this.replaying.has(sessionId)) return;
    if (isWaitingReason(end.stopReason)) {
      // Not over: the server prompts now (cadenza/askUser, cadenza/waitingHuman), and the
      // answer (or Reply… later) resumes the session.
      this.log(`session ${sessionId} waits: ${end.stopReason}${end.message ? `: ${end.message}` : ""}`);
      return;
    }
    this.log(`session ${sessionId} ended: ${end.stopReason}${end.message ? `: ${end.message}` : ""}`);
    void this.review.refresh(sessionId);
    const fix = end.fix && typeof end.fix.command === "string" ? end.fix : undefined;
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    if (settings.saveEdits === "onSessionEnd" && session.edited.length) {
      await saveDocuments(session.edited.map((p) => vscode.Uri.file(p).toString()));
    }
    const text = endNotice(end.stopReason, session.message ?? end.message);
    const reason = end.stopReason;
    // A turn sent from the panel's input ends in the panel the person looks at: no toast for a
    // normal end (errors and limits still get one).
    if (session.quiet && this.panel.visible && (reason === "end_turn" || reason === "cancelled")) return;
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
          if (choice === "Show Log") this.output.show(true);
          if (fix && choice === fix.title) await this.chat.runFix(sessionId, fix);
      }
      if (choice === showPanel) await this.panel.reveal();
    });
  }

  /**
   * A waiting session's question was declined (Escape in the input box): the session keeps
   * waiting; "Answer…" answers it now with `cadenza.replySession`.
   */
  private async offerAnswer(sessionId: string): Promise<void> {
    const session = this.store.get(sessionId);
    if (!session || session.state !== "waiting") return;
    const answer = "Answer…";
    const showPanel = "Show Panel";
    const text = session.question ? `Cadenza needs your input: ${session.question}` : endNotice(session.stopReason ?? "", session.message);
    const choice = await vscode.window.showWarningMessage(text, answer, showPanel);
    if (choice === answer) await this.reply(sessionId);
    else if (choice === showPanel) await this.panel.reveal();
  }

  private serverStopped(why: string): void {
    for (const session of this.store.running()) {
      this.store.abandon(session.id, why);
      this.progress.get(session.id)?.dispose();
      this.progress.delete(session.id);
    }
    for (const session of this.store.waiting()) {
      // Its transcript ends waiting: a reply to the next server revives it.
      this.store.note(session.id, `${why}; the session still waits: Reply… continues it on a new server.`, "warning");
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

  /** The panel's new session: the task (with the editor's context unless it has mentions). */
  private async startFromPanel(task: string, options: { model?: string; workflow?: string; withEditorContext: boolean }): Promise<string | undefined> {
    const { context, folder } = this.editorContext();
    return this.start(options.withEditorContext ? taskWithContext(task, context) : task, folder?.uri, options);
  }

  /** A server command (the server started first); throws the JSON-RPC error. */
  private async execute(command: string, argument: object, workDoneToken?: string): Promise<unknown> {
    const client = await this.server.ensure();
    void this.listModels(client);
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument], ...(workDoneToken ? { workDoneToken } : {}) });
  }

  /** The panel's pickers, once per server. */
  private async listModels(client: LanguageClient): Promise<void> {
    if (this.modelsListed === client) return;
    this.modelsListed = client;
    await this.chat.loadModels();
  }

  /** A command with work-done progress as a notification (Pull model). */
  private async runWithProgress(title: string, command: string, argument: object): Promise<unknown> {
    const client = await this.server.ensure();
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: false }, async (report) => {
      const token = `vscode-cadenza-fix-${Date.now()}`;
      const sub = client.onProgress(WorkDoneProgress.type, token, (value) => {
        const v = value as { message?: string; percentage?: number };
        if (v.message) report.report({ message: v.message });
      });
      try {
        return await this.execute(command, argument, token);
      } finally {
        sub.dispose();
      }
    });
  }

  private async start(
    task: string,
    rootUri: vscode.Uri | undefined,
    options: { model?: string; workflow?: string } = {},
  ): Promise<string | undefined> {
    if (!rootUri && !vscode.workspace.workspaceFolders?.length) {
      void vscode.window.showErrorMessage("Cadenza works on a folder: open one first (File › Open Folder…).");
      return undefined;
    }
    let client: LanguageClient;
    try {
      client = await this.server.ensure();
    } catch (error) {
      await this.serverFailed(error);
      return undefined;
    }
    void this.listModels(client);
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    const focused = vscode.window.activeTextEditor?.document.uri.toString();
    const args: SessionArguments & { model?: string } = sessionArguments(settings, task, rootUri?.toString(), focused);
    if (options.model) args.model = options.model;
    if (options.workflow) args.workflow = options.workflow;
    // Reveal before starting: the view lives in the side bar, and revealing it later could move
    // focus while a refactor preview (review mode, in the bottom panel) is open.
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
      return undefined;
    }
    if (!result || typeof result.sessionId !== "string") {
      progress.dispose();
      void vscode.window.showErrorMessage(`Cadenza: the server answered ${START_SESSION} without a sessionId.`);
      return undefined;
    }
    const session = this.store.add(result.sessionId, {
      task,
      root: rootUri?.fsPath,
      contextSize: settings.contextSize ?? undefined,
      model: options.model || settings.model || undefined,
      workflow: options.workflow || settings.workflow || undefined,
    });
    this.chat.focus(session.id);
    progress.sessionId = session.id;
    if (session.state === "ended" || session.state === "waiting") progress.dispose();
    else this.progress.set(session.id, progress);
    this.log(`session ${session.id} started: ${task.split("\n")[0]}`);
    this.changed();
    return session.id;
  }

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

  private async cancel(given?: unknown): Promise<void> {
    const active = this.store.active();
    const session =
      typeof given === "string"
        ? this.store.get(given)
        : await this.pickSession(active, "Which session should stop?");
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
      if (session.state === "running" || session.state === "starting") session.state = "cancelling";
      this.changed();
      if (!(result as { cancelled?: boolean })?.cancelled) {
        void vscode.window.showInformationMessage("Cadenza: that session had already ended.");
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Cadenza could not cancel: ${errorText(error)}`);
    }
  }

  /** The one message of a server that did not start: what to do, with Open Settings and Show Log. */
  private async serverFailed(error: unknown): Promise<void> {
    const settings = "Open Settings";
    const choice = await vscode.window.showErrorMessage(errorText(error instanceof Error ? error.message : error), settings, "Show Log");
    if (choice === settings) await vscode.commands.executeCommand("workbench.action.openSettings", "cadenza.server");
    else if (choice === "Show Log") this.output.show(true);
  }

  /** Run a server command that may not exist yet; undefined (after a message) when it fails. */
  private async optionalCommand(what: string, command: string, argument: object): Promise<unknown> {
    let client: LanguageClient;
    try {
      client = await this.server.ensure();
    } catch (error) {
      void this.serverFailed(error);
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
      if (picked) await this.panel.reveal();
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
    this.replaying.add(id);
    this.store.reset(id, { task: info.task, root: info.root || undefined, model: info.model || undefined });
    this.chat.focus(id);
    this.changed();
    await this.panel.reveal();
    let result: unknown;
    try {
      result = await this.optionalCommand("Load Session", LOAD_SESSION, { sessionId: id });
    } finally {
      this.replaying.delete(id);
    }
    if (result === undefined) return;
    if (typeof result === "object" && result !== null && "unsupported" in result) {
      void vscode.window.showWarningMessage((result as { unsupported: string }).unsupported);
      return;
    }
    const loaded = (result as Partial<LoadSessionResult>).session;
    this.store.settle(id, loaded?.state ?? info.state, loaded?.question ?? info.question);
    this.log(`session ${id} loaded: ${(result as Partial<LoadSessionResult>).updates ?? "?"} updates, ${loaded?.state ?? info.state}`);
    this.changed();
  }

  /**
   * Cadenza: Reply to Session… (and the panel's Reply… / Continue, and Answer…): resume a
   * session that waits for the person with `cadenza.replySession {sessionId, text}`.
   *
   * @param given a session id, or `{sessionId, text?}`; nothing: pick among the waiting
   *   sessions of this window, else among those the server lists as waiting.
   */
  private async reply(given?: unknown): Promise<void> {
    let sessionId = typeof given === "string" ? given : undefined;
    let text: string | undefined;
    if (given && typeof given === "object") {
      const arg = given as { sessionId?: unknown; text?: unknown };
      if (typeof arg.sessionId === "string") sessionId = arg.sessionId;
      if (typeof arg.text === "string") text = arg.text;
    }
    let session = sessionId ? this.store.get(sessionId) : undefined;
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
    this.log(`session ${sessionId} replied: resumed ${reply.resumed}, ${reply.state}`);
  }

  /** A waiting session: this window's, else one the server lists as waiting; undefined after a message. */
  private async pickWaiting(): Promise<SessionView | undefined> {
    const local = this.store.waiting();
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
    return this.store.add(info.sessionId, {
      task: info.task,
      root: info.root || undefined,
      state: "waiting",
      stopReason: info.state,
      question: info.question,
    });
  }

  private localSessionItems() {
    return [...this.store.list()].reverse().map((s) => ({
      label: s.task.split("\n")[0] || s.id,
      description: describeState(s),
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
      case "reply":
        await this.reply(message.sessionId);
        break;
      case "continue":
        // waiting_human: the person is done in the browser.
        await this.reply({ sessionId: message.sessionId, text: "" });
        break;
      case "prompt":
        await this.chat.prompt(message.text, message.mentions);
        break;
      case "complete": {
        const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
        const items = await this.chat.complete(message.trigger === "/" ? "/" : "@", String(message.query ?? ""), root);
        this.panel.post({ type: "completions", requestId: message.requestId, trigger: message.trigger, items });
        break;
      }
      case "choose":
        await this.chat.choose(message.what === "workflow" ? "workflow" : "model", message.value);
        break;
      case "newSession":
        this.chat.newSession();
        break;
      case "history":
        await this.showSessions();
        break;
      case "focus":
        this.chat.focus(message.sessionId);
        break;
      case "review":
        await this.review.review(message.sessionId, message.action === "undo" ? "undo" : "keep", message.uris ? { uris: message.uris } : {});
        break;
      case "fix": {
        const end = [...(this.store.get(message.sessionId)?.entries ?? [])].reverse().find((e) => e.kind === "end");
        await this.chat.runFix(message.sessionId, end?.kind === "end" ? end.fix : undefined);
        break;
      }
      case "openLink": {
        const href = openableLink(message.href);
        if (href) await vscode.env.openExternal(vscode.Uri.parse(href));
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
