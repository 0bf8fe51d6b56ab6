/**
 * Review after the fact: when a turn ends, the changes it made show inline in the editors
 * (a background on the new lines, the old text in the hover) with CodeLenses "Keep" / "Undo"
 * per hunk and per file; "Keep all" / "Undo all" are commands and buttons of the panel.
 *
 * The server owns the changes (`cadenza.listChanges`, `cadenza.reviewChanges`): an undo goes
 * through it (it puts the old text back with `workspace/applyEdit`, keeps its checkpoints true and
 * tells the model on the next turn), and a refusal (the file changed there since) is shown as
 * the server's sentence. This module only draws what the server answers.
 */

import * as vscode from "vscode";

import { errorText } from "./errors";
import { fileReviews, hunkStats, parseChanges, pendingHunks, reviewLenses, reviewOutcome } from "./hunks";
import { LIST_CHANGES, REVIEW_CHANGES, type ChangesResult, type Hunk, type WireRange } from "./protocol";
import type { SessionStore } from "./sessions";

/** Runs a server command; throws the JSON-RPC error. */
export type Execute = (command: string, argument: object) => Promise<unknown>;

export interface ReviewHost {
  execute: Execute;
  /** The commands the server advertises (undefined before it started). */
  advertised(): readonly string[] | undefined;
  store: SessionStore;
  changed(): void;
  log(line: string): void;
}

const REFUSED = -32803;

function toRange(range: WireRange): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

export class ReviewController implements vscode.CodeLensProvider, vscode.Disposable {
  /** The latest turn's changes of each session that has any. */
  private readonly changes = new Map<string, ChangesResult>();
  private readonly lensChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensChanged.event;
  private readonly added = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
    isWholeLine: true,
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly removed = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    after: { color: new vscode.ThemeColor("editorCodeLens.foreground"), margin: "0 0 0 2em" },
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.deletedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly disposables: vscode.Disposable[] = [];
  private relist: NodeJS.Timeout | undefined;

  constructor(private readonly host: ReviewHost) {
    this.disposables.push(
      this.added,
      this.removed,
      this.lensChanged,
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.workspace.onDidChangeTextDocument((e) => this.documentChanged(e.document.uri.toString())),
      // `hunks` and `uris` add up (a URI names every hunk of its file): a hunk goes alone.
      vscode.commands.registerCommand("cadenza.keepHunk", (sessionId: string, hunkId: string) =>
        this.review(sessionId, "keep", { hunks: [hunkId] }),
      ),
      vscode.commands.registerCommand("cadenza.undoHunk", (sessionId: string, hunkId: string) =>
        this.review(sessionId, "undo", { hunks: [hunkId] }),
      ),
      vscode.commands.registerCommand("cadenza.keepFile", (sessionId?: string, uri?: string) => this.file(sessionId, uri, "keep")),
      vscode.commands.registerCommand("cadenza.undoFile", (sessionId?: string, uri?: string) => this.file(sessionId, uri, "undo")),
      vscode.commands.registerCommand("cadenza.keepAll", (sessionId?: string) => this.all(sessionId, "keep")),
      vscode.commands.registerCommand("cadenza.undoAll", (sessionId?: string) => this.all(sessionId, "undo")),
    );
  }

  /** Whether the server can list a turn's changes. */
  supported(): boolean {
    return (this.host.advertised() ?? []).includes(LIST_CHANGES);
  }

  /** Fetch a session's latest-turn changes (after its turn ended) and draw them. */
  async refresh(sessionId: string): Promise<void> {
    if (!this.supported()) return;
    try {
      this.set(sessionId, parseChanges(await this.host.execute(LIST_CHANGES, { sessionId }), sessionId));
    } catch (error) {
      this.host.log(`${LIST_CHANGES} failed: ${errorText(error)}`);
    }
  }

  /** A new turn starts: the earlier turn's changes are no longer offered. */
  forget(sessionId: string): void {
    if (!this.changes.delete(sessionId)) return;
    const session = this.host.store.get(sessionId);
    if (session) session.review = session.unlisted = undefined;
    this.redraw();
  }

  /** The newest session with hunks that wait for review (the default of Keep all / Undo all). */
  private latestPending(): string | undefined {
    return [...this.changes.keys()].reverse().find((id) => pendingHunks(this.changes.get(id)).length > 0);
  }

  private set(sessionId: string, result: ChangesResult): void {
    this.changes.set(sessionId, result);
    const session = this.host.store.get(sessionId);
    if (session) {
      session.review = fileReviews(result);
      session.unlisted = result.unlisted;
    }
    this.redraw();
  }

  private redraw(): void {
    this.decorate();
    this.lensChanged.fire();
    this.host.changed();
  }

  private hunksOf(uri: string): { sessionId: string; hunk: Hunk }[] {
    const found: { sessionId: string; hunk: Hunk }[] = [];
    for (const [sessionId, result] of this.changes) {
      // A hunk without a range was changed by the person since: nothing to show or undo there.
      for (const hunk of pendingHunks(result, uri)) if (hunk.range) found.push({ sessionId, hunk });
    }
    return found;
  }

  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const added: vscode.DecorationOptions[] = [];
      const removed: vscode.DecorationOptions[] = [];
      for (const { hunk } of this.hunksOf(editor.document.uri.toString())) {
        const hover = new vscode.MarkdownString();
        hover.appendMarkdown(`**Cadenza changed this (${hunkStats(hunk)})**${hunk.oldText ? ", it was:" : ""}`);
        if (hunk.oldText) hover.appendCodeblock(hunk.oldText.replace(/\n$/, ""), editor.document.languageId);
        const range = toRange(hunk.range as WireRange);
        if (hunk.newText === "") {
          const first = hunk.oldText.split("\n")[0].trim();
          removed.push({
            range: new vscode.Range(range.start.line, 0, range.start.line, 0),
            hoverMessage: hover,
            renderOptions: { after: { contentText: `− removed: ${first.slice(0, 60)}${hunk.oldText.split("\n").length > 2 ? " …" : ""}` } },
          });
        } else {
          // A range ending at column 0 ends on the line before (whole-line decorations).
          const end = range.end.character === 0 && range.end.line > range.start.line ? range.end.line - 1 : range.end.line;
          added.push({ range: new vscode.Range(range.start.line, 0, end, 0), hoverMessage: hover });
        }
      }
      editor.setDecorations(this.added, added);
      editor.setDecorations(this.removed, removed);
    }
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    return reviewLenses(this.changes, document.uri.toString()).map(
      (lens) => new vscode.CodeLens(new vscode.Range(lens.line, 0, lens.line, 0), { title: lens.title, command: lens.command, arguments: lens.arguments }),
    );
  }

  private async file(sessionId: string | undefined, uri: string | undefined, action: "keep" | "undo"): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    const id = sessionId ?? (target ? this.hunksOf(target)[0]?.sessionId : undefined);
    if (!id || !target) {
      void vscode.window.showInformationMessage("Cadenza: this file has no change of the agent to review.");
      return;
    }
    await this.review(id, action, { uris: [target] });
  }

  private async all(sessionId: string | undefined, action: "keep" | "undo"): Promise<void> {
    const id = typeof sessionId === "string" ? sessionId : this.latestPending();
    if (!id) {
      void vscode.window.showInformationMessage("Cadenza: no change of the agent waits for review.");
      return;
    }
    await this.review(id, action, {});
  }

  /** `cadenza.reviewChanges`; a refusal (the text changed there since) as the server's sentence. */
  async review(sessionId: string, action: "keep" | "undo", scope: { hunks?: string[]; uris?: string[] }): Promise<void> {
    const before = this.changes.get(sessionId);
    let result: ChangesResult;
    try {
      result = parseChanges(await this.host.execute(REVIEW_CHANGES, { sessionId, action, ...scope }), sessionId);
    } catch (error) {
      this.host.log(`${REVIEW_CHANGES} ${action} failed: ${errorText(error)}`);
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      const text = typeof message === "string" ? message : errorText(error);
      if (code === REFUSED) void vscode.window.showWarningMessage(`Cadenza did not ${action} that change: ${text}`);
      else void vscode.window.showErrorMessage(`Cadenza could not ${action} the change: ${text}`);
      await this.refresh(sessionId);
      return;
    }
    this.set(sessionId, result);
    const outcome = reviewOutcome(action, before, result);
    this.host.store.note(sessionId, `You ${outcome}`);
    this.host.changed();
    this.host.log(`session ${sessionId} review ${action}: ${outcome}`);
  }

  /** The person typed in a file with changes under review: the server's ranges move with it. */
  private documentChanged(uri: string): void {
    if (this.hunksOf(uri).length === 0) return;
    if (this.relist) clearTimeout(this.relist);
    this.relist = setTimeout(() => {
      this.relist = undefined;
      for (const sessionId of this.changes.keys()) void this.refresh(sessionId);
    }, 600);
  }

  dispose(): void {
    if (this.relist) clearTimeout(this.relist);
    for (const d of this.disposables) d.dispose();
  }
}
