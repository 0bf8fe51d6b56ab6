/**
 * Inline completions (ghost text) from the server's `textDocument/inlineCompletion`.
 *
 * vscode-languageclient 9 carries the request as a proposed feature (`registerProposedFeatures`);
 * this middleware lets the `cadenza.completions.enabled` setting turn it off without a restart:
 * while it is off, no request leaves the editor. No `vscode` import, so it is unit-tested in
 * plain Node.
 */

import { type ConfigurationLike, type InspectedValue, settingValue } from "./settingScopes";

export const COMPLETIONS_SETTING = "completions.enabled";

/** Whether ghost text is asked for: the setting, on unless it is `false`. */
export function completionsEnabled(config: ConfigurationLike): boolean {
  return settingValue(config, COMPLETIONS_SETTING) !== false;
}

type Next<D, P, C, T, R> = (document: D, position: P, context: C, token: T) => R;

/** The client middleware: forwards to the server while `isEnabled()`, else answers nothing. */
export function completionMiddleware(isEnabled: () => boolean) {
  return {
    provideInlineCompletionItems<D, P, C, T, R>(
      document: D,
      position: P,
      context: C,
      token: T,
      next: Next<D, P, C, T, R>,
    ): R | null {
      return isEnabled() ? next(document, position, context, token) : null;
    },
  };
}

/**
 * Where a toggle writes the setting: the most specific scope that sets it (a user value would
 * not override a workspace's), else the user settings.
 */
export function toggleScope(inspected: InspectedValue<unknown> | undefined): "workspaceFolder" | "workspace" | "global" {
  if (inspected?.workspaceFolderValue !== undefined) return "workspaceFolder";
  if (inspected?.workspaceValue !== undefined) return "workspace";
  return "global";
}

/** The status bar item's text and tooltip for a state. */
export function completionsStatus(enabled: boolean): { text: string; tooltip: string } {
  return enabled
    ? { text: "$(sparkle) Completions: on", tooltip: "Cadenza inline completions are on: click to turn them off" }
    : { text: "$(circle-slash) Completions: off", tooltip: "Cadenza inline completions are off: click to turn them on" };
}
