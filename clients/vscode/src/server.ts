/**
 * The `cadenza serve` process and its vscode-languageclient connection: started on first use
 * (a window that never runs a task never starts Python), restarted on demand, stopped on
 * deactivation. Handlers for Cadenza's own messages are installed by the caller through
 * `onClient`, each time a client is created.
 */

import * as vscode from "vscode";
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  type StaticFeature,
  type ClientCapabilities,
  type FeatureState,
} from "vscode-languageclient/node";

import { completionMiddleware, completionsEnabled } from "./completions";
import { initializationOptions, readSettings, serverCommand, serverEnvironment, type ServerCommand } from "./config";
import { startFailure } from "./errors";
import { CADENZA_CAPABILITIES } from "./protocol";

/**
 * Declares `experimental.cadenza.{askUser, requestPermission, waitingHuman}`, so questions,
 * permission requests and "act in the browser" come as Cadenza's own requests (answered in
 * prompts.ts) rather than as `window/showMessageRequest` buttons. vscode-languageclient declares
 * `window.showDocument.support` itself, so the server opens a waiting_human page with
 * `window/showDocument` first.
 */
export class CadenzaCapabilities implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, cadenza: { ...CADENZA_CAPABILITIES } };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: "static" };
  }
  clear(): void {}
}

/**
 * A LanguageClient that writes its own errors to the output channel only: the extension reports
 * a failed start or a crash itself, once, with what to do (vscode-languageclient would add a
 * second toast, "couldn't create connection to server", with no hint).
 */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | "force"): void {
    super.error(message, data, false);
  }
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly stopped = new vscode.EventEmitter<string>();
  /** Fires with a reason when a client stops (crash, restart, deactivation). */
  readonly onDidStop = this.stopped.event;
  private command: ServerCommand | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly onClient: (client: LanguageClient) => vscode.Disposable[],
  ) {}

  /** The running client, if any (no start). */
  get current(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  /** The commands the running server advertised in `executeCommandProvider`. */
  advertisedCommands(): string[] | undefined {
    const provider = this.client?.initializeResult?.capabilities.executeCommandProvider;
    return provider?.commands;
  }

  /** The running client, starting the server first when needed. */
  async ensure(): Promise<LanguageClient> {
    if (this.client && this.client.state === State.Running) return this.client;
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private readonly lines: string[] = [];

  private log(line: string): void {
    this.output.appendLine(`[${new Date().toISOString()}] ${line}`);
  }

  /** The output channel, remembering the last lines written (the server's stderr among them). */
  private recording(): vscode.OutputChannel {
    const keep = (value: string) => {
      this.lines.push(...String(value).split("\n"));
      if (this.lines.length > 50) this.lines.splice(0, this.lines.length - 50);
    };
    return new Proxy(this.output, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop) as unknown;
        if (prop === "append" || prop === "appendLine") {
          return (text: string) => {
            keep(text);
            (value as (t: string) => void).call(target, text);
          };
        }
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** The last lines written to the output channel (the server's stderr among them). */
  private recentLog(): string {
    return this.lines.slice(-20).join("\n");
  }

  private async start(): Promise<LanguageClient> {
    await this.dispose_client("replaced");
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    const command = serverCommand(settings, process.env.PATH);
    this.command = command;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const serverOptions: ServerOptions = {
      command: command.command,
      args: command.args,
      // No transport: stdio without the `--stdio` argument vscode-languageclient would add.
      options: { env: serverEnvironment(settings, process.env), cwd: folder?.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file buffer is synced: the agent reads unsaved text from the editor.
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.recording(),
      traceOutputChannel: this.output,
      initializationOptions: () => initializationOptions(readSettings(vscode.workspace.getConfiguration("cadenza"))),
      // The server's own warnings (window/showMessage) are shown; its crashes are reported
      // once by us rather than by the client's default popup.
      revealOutputChannelOn: 4, // RevealOutputChannelOn.Never
      connectionOptions: { maxRestartCount: 2 },
      // Ghost text from textDocument/inlineCompletion, while cadenza.completions.enabled is on.
      middleware: completionMiddleware(() => completionsEnabled(vscode.workspace.getConfiguration("cadenza"))),
    };
    const client = new QuietLanguageClient("cadenza", "Cadenza", serverOptions, clientOptions);
    client.registerFeature(new CadenzaCapabilities());
    // vscode-languageclient 9 ships inline completions as its one proposed feature.
    client.registerProposedFeatures();
    const disposables = this.onClient(client);
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client) {
        this.stopped.fire("the server stopped");
      }
    });
    this.client = client;
    (client as unknown as { _cadenzaDisposables?: vscode.Disposable[] })._cadenzaDisposables = disposables;
    this.log(`starting ${[command.command, ...command.args].join(" ")} (from ${describeSource(command)})`);
    try {
      await client.start();
    } catch (error) {
      this.log(`the server did not start: ${String(error)}`);
      await this.dispose_client("failed to start");
      throw new Error(startFailure(command, error, this.recentLog()));
    }
    const info = client.initializeResult?.serverInfo;
    this.log(`server ${info?.name ?? "?"} ${info?.version ?? "?"} ready`);
    return client;
  }

  /** Stop the server (its sessions are cancelled by its shutdown) and start a new one. */
  async restart(): Promise<LanguageClient> {
    await this.dispose_client("restarted");
    return this.ensure();
  }

  private async dispose_client(reason: string): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.stopped.fire(`the server was ${reason}`);
    for (const d of (client as unknown as { _cadenzaDisposables?: vscode.Disposable[] })._cadenzaDisposables ?? []) {
      d.dispose();
    }
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (error) {
      this.log(`stopping the server: ${String(error)}`);
    }
    try {
      await client.dispose(2000);
    } catch {
      // already stopped
    }
  }

  async stop(): Promise<void> {
    await this.dispose_client("stopped");
  }

  dispose(): void {
    void this.stop();
    this.stopped.dispose();
  }
}

function describeSource(command: ServerCommand): string {
  switch (command.source) {
    case "setting":
      return "the cadenza.server.command setting";
    case "PATH":
      return "cadenza on the PATH";
    case "python":
      return "no cadenza on the PATH: python -m cadenza";
  }
}
