/**
 * Starting a session: the task (asked for in an input box, or the panel's message) with the
 * active editor's context, `cadenza.startSession` with the settings and work-done progress,
 * and the new session in the store; the one message of a server that did not start.
 */

import * as vscode from "vscode";
import { ExecuteCommandRequest, type LanguageClient } from "vscode-languageclient/node";

import { readSettings, sessionArguments, type SessionArguments } from "./config";
import { describeContext, relativePath, taskWithContext, type EditorContext } from "./context";
import type { StartOptions } from "./chat";
import { errorText } from "./errors";
import type { ExtensionHost } from "./host";
import { SessionProgress } from "./progress";
import { START_SESSION, type PromptContext, type StartSessionResult } from "./protocol";
import { taskLabel } from "./sessionText";

/** The one message of a server that did not start: what to do, with Open Settings and Show Log. */
export async function serverFailed(output: vscode.OutputChannel, error: unknown): Promise<void> {
  const settings = "Open Settings";
  const choice = await vscode.window.showErrorMessage(errorText(error instanceof Error ? error.message : error), settings, "Show Log");
  if (choice === settings) await vscode.commands.executeCommand("workbench.action.openSettings", "cadenza.server");
  else if (choice === "Show Log") output.show(true);
}

export class SessionStarter {
  constructor(private readonly host: ExtensionHost) {}

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

  async runTask(given?: unknown): Promise<void> {
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
    await this.start(taskWithContext(task, context), folder?.uri, { label: task });
  }

  /** The panel's new session: the task (with the editor's place unless it has mentions) and its mentions. */
  async startFromPanel(task: string, options: StartOptions): Promise<string | undefined> {
    const { context, folder } = this.editorContext();
    return this.start(options.withEditorContext ? taskWithContext(task, context) : task, folder?.uri, { ...options, label: task });
  }

  /**
   * @param task what the model gets: the person's words and the editor context.
   * @param options.label the person's words alone (the progress notification shows them).
   */
  async start(
    task: string,
    rootUri: vscode.Uri | undefined,
    options: { model?: string; workflow?: string; context?: PromptContext; label?: string } = {},
  ): Promise<string | undefined> {
    if (!rootUri && !vscode.workspace.workspaceFolders?.length) {
      void vscode.window.showErrorMessage("Cadenza works on a folder: open one first (File › Open Folder…).");
      return undefined;
    }
    let client: LanguageClient;
    try {
      client = await this.host.server.ensure();
    } catch (error) {
      await serverFailed(this.host.output, error);
      return undefined;
    }
    void this.host.listModels(client);
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    const focused = vscode.window.activeTextEditor?.document.uri.toString();
    const args: SessionArguments & { model?: string; context?: PromptContext } = sessionArguments(settings, task, rootUri?.toString(), focused);
    if (options.model) args.model = options.model;
    if (options.context) args.context = options.context;
    if (options.workflow) args.workflow = options.workflow;
    // Reveal before starting: the view lives in the side bar, and revealing it later could move
    // focus while a refactor preview (review mode, in the bottom panel) is open.
    if (settings.revealOnRun) await this.host.panel.reveal();
    const progress = new SessionProgress(
      client,
      taskLabel(options.label ?? task),
      this.host.closings,
      (id, message) => {
        if (id) {
          this.host.store.progress(id, message);
          this.host.changed();
        }
      },
      (id) => {
        const session = id ? this.host.store.get(id) : undefined;
        if (session && session.state !== "ended") session.state = "cancelling";
        this.host.changed();
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
      this.host.log(`${START_SESSION} failed: ${errorText(error)}`);
      void vscode.window.showErrorMessage(`Cadenza could not start the task: ${errorText(error)}`);
      return undefined;
    }
    if (!result || typeof result.sessionId !== "string") {
      progress.dispose();
      void vscode.window.showErrorMessage(`Cadenza: the server answered ${START_SESSION} without a sessionId.`);
      return undefined;
    }
    const session = this.host.store.add(result.sessionId, {
      task,
      root: rootUri?.fsPath,
      contextSize: settings.contextSize ?? undefined,
      model: options.model || settings.model || undefined,
      workflow: options.workflow || settings.workflow || undefined,
    });
    this.host.chat.focus(session.id);
    progress.sessionId = session.id;
    if (session.state === "ended" || session.state === "waiting") progress.dispose();
    else this.host.progress.set(session.id, progress);
    this.host.log(`session ${session.id} started: ${task.split("\n")[0]}`);
    this.host.changed();
    return session.id;
  }
}
