/**
 * What the extension's parts share (implemented by extension.ts): the server, the sessions and
 * the panel, and the bookkeeping of running sessions.
 */

import type * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

import type { Chat } from "./chat";
import type { Closings } from "./notices";
import type { PanelProvider } from "./panel";
import type { SessionProgress } from "./progress";
import type { ReviewController } from "./review";
import type { ServerManager } from "./server";
import type { SessionStore } from "./sessions";

export interface ExtensionHost {
  readonly output: vscode.OutputChannel;
  readonly store: SessionStore;
  readonly panel: PanelProvider;
  readonly server: ServerManager;
  readonly chat: Chat;
  readonly review: ReviewController;
  /** The work-done progress of each running session, by sessionId. */
  readonly progress: Map<string, SessionProgress>;
  /** Progress notifications of ended sessions still on screen (end notifications wait for them). */
  readonly closings: Closings;
  /** Sessions whose history `cadenza.loadSession` is replaying: no notifications for them. */
  readonly replaying: Set<string>;
  log(line: string): void;
  /** The sessions changed: the panel and the status bar show them again. */
  changed(): void;
  updateStatus(): void;
  /** The panel's pickers, once per server. */
  listModels(client: LanguageClient): Promise<void>;
}
