// A stand-in for the `vscode` module in unit tests (vitest.config.mts aliases `vscode` to it):
// the few functions prompts.ts and progress.ts call, each replaced by a test (the objects are
// mutable), and a cancellation token the test controls.

import { configuration } from "./configuration";

type Listener = () => void;

export class CancellationTokenSource {
  private listeners: Listener[] = [];
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: (listener: Listener) => {
      this.listeners.push(listener);
      return { dispose: () => undefined };
    },
  };

  cancel(): void {
    this.token.isCancellationRequested = true;
    for (const listener of this.listeners) listener();
  }
}

export const Uri = {
  parse: (value: string) => ({ scheme: value.split(":")[0], toString: () => value }),
};

export const env = {
  openExternal: async (_uri: unknown): Promise<boolean> => true,
};

export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };

export const window = {
  withProgress: async (..._args: unknown[]): Promise<unknown> => undefined,
  showInputBox: async (..._args: unknown[]): Promise<string | undefined> => undefined,
  showQuickPick: async (..._args: unknown[]): Promise<unknown> => undefined,
  showInformationMessage: async (..._args: unknown[]): Promise<string | undefined> => undefined,
  showWarningMessage: async (..._args: unknown[]): Promise<string | undefined> => undefined,
  showErrorMessage: async (..._args: unknown[]): Promise<string | undefined> => undefined,
};

export const workspace = {
  /** The person's (user) settings, and the workspace's (keys without `cadenza.`). */
  settings: {} as Record<string, unknown>,
  workspaceSettings: {} as Record<string, unknown>,
  getConfiguration: (_section?: string) => configuration(workspace.settings, workspace.workspaceSettings),
};
