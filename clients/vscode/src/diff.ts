/**
 * "Open diff": VS Code's diff editor (`vscode.diff`) on the before and after texts of one change
 * of the agent, served from memory under the `cadenza-diff:` scheme (read-only documents).
 */

import * as path from "node:path";
import * as vscode from "vscode";

import type { SessionStore } from "./sessions";

export const DIFF_SCHEME = "cadenza-diff";

export class DiffContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly store: SessionStore) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    // /ID/before/NAME or /ID/after/NAME
    const [, id, side] = uri.path.split("/");
    const diff = this.store.diff(id);
    if (!diff) return "";
    return side === "before" ? (diff.oldText ?? "") : diff.newText;
  }
}

export async function openDiff(store: SessionStore, diffId: string): Promise<void> {
  const diff = store.diff(diffId);
  if (!diff) {
    void vscode.window.showWarningMessage("Cadenza: this change is no longer in memory.");
    return;
  }
  const name = path.basename(diff.path);
  const side = (which: string) => vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${diffId}/${which}/${name}` });
  const title = diff.created ? `${name} (created by Cadenza)` : `${name} (Cadenza's change)`;
  await vscode.commands.executeCommand("vscode.diff", side("before"), side("after"), title, { preview: true });
}
