/**
 * Cadenza for VS Code: the palette commands, the panel, progress and prompts, on top of
 * `cadenza serve` through vscode-languageclient.
 */

import * as vscode from "vscode";
import { ApplyWorkspaceEditRequest, ExecuteCommandRequest, WorkDoneProgress, type LanguageClient } from "vscode-languageclient/node";

import { readSettings, restartNeeded, type Settings } from "./config";
import { DIFF_SCHEME, DiffContentProvider } from "./diff";
import { applyEditHandler } from "./edits";
import { errorText } from "./errors";
import type { ExtensionHost } from "./host";
import { PANEL_VIEW_ID, PanelProvider } from "./panel";
import { handlePanelMessage } from "./panelMessages";
import type { SessionProgress } from "./progress";
import { installIntel } from "./intel";
import { managePermissions } from "./managePermissions";
import { Closings } from "./notices";
import { CompletionsToggle } from "./completionsToggle";
import { askUser, requestPermission, waitingHuman, type PromptHost } from "./prompts";
import { ASK_USER, REQUEST_PERMISSION, SESSION_UPDATE, WAITING_HUMAN, type SessionUpdateParams } from "./protocol";
import { ServerManager } from "./server";
import { Chat } from "./chat";
import { ReviewController } from "./review";
import { SessionCommands } from "./sessionCommands";
import { SessionEnds } from "./sessionEnds";
import { SessionStore } from "./sessions";
import { SessionStarter } from "./starting";
import { StatusBar } from "./statusBar";
import { WorkspaceSettingsGuard } from "./workspaceSettings";

class Cadenza implements vscode.Disposable, ExtensionHost {
  readonly output = vscode.window.createOutputChannel("Cadenza");
  readonly store = new SessionStore();
  readonly panel: PanelProvider;
  readonly server: ServerManager;
  readonly progress = new Map<string, SessionProgress>(); // by sessionId
  readonly closings = new Closings();
  /** Sessions whose history `cadenza.loadSession` is replaying: no notifications for them. */
  readonly replaying = new Set<string>();
  private readonly status = new StatusBar(this.store);
  private readonly commands = new SessionCommands(this);
  private readonly starter = new SessionStarter(this);
  private readonly ends = new SessionEnds(this, (sessionId) => this.commands.reply(sessionId));
  private readonly disposables: vscode.Disposable[] = [];
  readonly chat: Chat;
  readonly review: ReviewController;
  private modelsListed: LanguageClient | undefined;
  /** The settings in effect at the last change (what a restart offer compares with). */
  private settings: Settings = readSettings(vscode.workspace.getConfiguration("cadenza"));

  constructor(private readonly context: vscode.ExtensionContext) {
    this.panel = new PanelProvider(context.extensionUri, this.store, (m) => void handlePanelMessage(m, this, this.commands, this.starter), () => this.chat.state());
    this.server = new ServerManager(this.output, (client) => this.installHandlers(client));
    const execute = (command: string, argument: object, workDoneToken?: string) => this.execute(command, argument, workDoneToken);
    const host = { store: this.store, changed: () => this.changed(), log: (line: string) => this.log(line), advertised: () => this.server.advertisedCommands() };
    this.review = new ReviewController({ ...host, execute });
    this.chat = new Chat({
      ...host,
      execute,
      start: (task, options) => this.starter.startFromPanel(task, options),
      reply: (sessionId, text) => this.commands.reply({ sessionId, text }),
      settings: () => {
        const s = readSettings(vscode.workspace.getConfiguration("cadenza"));
        return { model: s.model, workflow: s.workflow };
      },
      runWithProgress: (title, command, argument) => this.runWithProgress(title, command, argument),
      setInput: (text) => this.panel.post({ type: "setInput", text }),
      forgetReview: (sessionId) => this.review.forget(sessionId),
    });
    const completions = new CompletionsToggle(
      () => this.server.ensure(),
      () => this.server.current !== undefined,
      (line) => this.log(line),
    );
    this.disposables.push(this.review, new WorkspaceSettingsGuard((line) => this.log(line)), completions);
    this.disposables.push(
      this.output,
      this.status,
      this.panel,
      this.server,
      this.server.onDidStop((why) => {
        this.serverStopped(why);
        completions.serverStopped();
      }),
      vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, this.panel, {
        webviewOptions: { retainContextWhenHidden: true },
      }),
      vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, new DiffContentProvider(this.store)),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      vscode.commands.registerCommand("cadenza.runTask", (task?: unknown) => this.starter.runTask(task)),
      vscode.commands.registerCommand("cadenza.cancel", (id?: unknown) => this.commands.cancel(id)),
      vscode.commands.registerCommand("cadenza.undo", (id?: unknown) => this.commands.undo(id)),
      vscode.commands.registerCommand("cadenza.reply", (arg?: unknown) => this.commands.reply(arg)),
      vscode.commands.registerCommand("cadenza.showSessions", () => this.commands.showSessions()),
      vscode.commands.registerCommand("cadenza.restartServer", () => this.restart()),
      vscode.commands.registerCommand("cadenza.showLog", () => this.output.show(true)),
      vscode.commands.registerCommand("cadenza.clearPanel", () => {
        this.store.clearEnded();
        this.changed();
      }),
      vscode.commands.registerCommand("cadenza.newSession", () => this.chat.newSession()),
      vscode.commands.registerCommand("cadenza.managePermissions", () =>
        managePermissions((command, argument) => this.execute(command, argument), vscode.workspace.workspaceFolders?.[0]?.uri.toString()),
      ),
    );
    this.updateStatus();
  }

  log(line: string): void {
    this.output.appendLine(`[${new Date().toISOString()}] ${line}`);
  }

  changed(): void {
    this.panel.refresh();
    this.updateStatus();
  }

  updateStatus(): void {
    this.status.update();
  }

  // ---- server → client -------------------------------------------------------------------

  private installHandlers(client: LanguageClient): vscode.Disposable[] {
    const host: PromptHost = {
      store: this.store,
      changed: () => this.changed(),
      answerLater: (sessionId) => void this.ends.offerAnswer(sessionId),
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
    if (end) {
      void this.ends.ended(params.sessionId, end);
      void this.chat.queue.ended(params.sessionId);
    }
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

  /** A server command (the server started first); throws the JSON-RPC error. */
  private async execute(command: string, argument: object, workDoneToken?: string): Promise<unknown> {
    const client = await this.server.ensure();
    void this.listModels(client);
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument], ...(workDoneToken ? { workDoneToken } : {}) });
  }

  /** The panel's pickers, once per server. */
  async listModels(client: LanguageClient): Promise<void> {
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
    const before = this.settings;
    this.settings = s;
    this.log(
      `settings changed: model ${s.model || "(server's)"}, workflow ${s.workflow || "default"}, ` +
        `reviewMode ${s.reviewMode}, saveEdits ${s.saveEdits}, permissions ${s.permissionsDefault}`,
    );
    if (!this.server.current || !restartNeeded(before, s)) return;
    void vscode.window
      .showInformationMessage("Cadenza: restart the server to apply the new settings?", "Restart")
      .then((choice) => (choice === "Restart" ? this.restart() : undefined));
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
