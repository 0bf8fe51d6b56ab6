/**
 * The changes of a session's latest turn as the review shows them (`cadenza.listChanges` and
 * `cadenza.reviewChanges` answer `{sessionId, files: [{uri, path, hunks}], unlisted}`,
 * docs/protocol.md): the agent's edits and what its commands changed.
 * Pure (no `vscode`): checking the server's answer, counting what waits for review, the panel's
 * summary and the words of a review's outcome.
 */

import type { ChangesResult, FileChanges, Hunk, HunkState, WireRange } from "./protocol";

/** One file's review in the panel: how many hunks wait, were kept, were undone. */
export interface FileReview {
  uri: string;
  path: string;
  pending: number;
  kept: number;
  undone: number;
}

const STATES: ReadonlySet<string> = new Set(["pending", "kept", "undone"]);

function isPosition(value: unknown): boolean {
  const p = value as { line?: unknown; character?: unknown } | undefined;
  return !!p && Number.isInteger(p.line) && Number.isInteger(p.character);
}

function isRange(value: unknown): value is WireRange {
  const r = value as { start?: unknown; end?: unknown } | undefined;
  return !!r && isPosition(r.start) && isPosition(r.end);
}

/** The server's answer checked field by field; hunks or files that do not fit are dropped. */
export function parseChanges(result: unknown, sessionId: string): ChangesResult {
  const raw = (result ?? {}) as { sessionId?: unknown; files?: unknown; unlisted?: unknown };
  const files: FileChanges[] = [];
  for (const file of Array.isArray(raw.files) ? (raw.files as Record<string, unknown>[]) : []) {
    if (!file || typeof file.uri !== "string") continue;
    const hunks: Hunk[] = [];
    for (const h of Array.isArray(file.hunks) ? (file.hunks as Record<string, unknown>[]) : []) {
      if (!h || typeof h.id !== "string") continue;
      hunks.push({
        id: h.id,
        range: isRange(h.range) ? h.range : undefined,
        oldText: typeof h.oldText === "string" ? h.oldText : "",
        newText: typeof h.newText === "string" ? h.newText : "",
        state: (typeof h.state === "string" && STATES.has(h.state) ? h.state : "pending") as HunkState,
      });
    }
    files.push({ uri: file.uri, path: typeof file.path === "string" ? file.path : file.uri, hunks });
  }
  const parsed: ChangesResult = { sessionId: typeof raw.sessionId === "string" ? raw.sessionId : sessionId, files };
  const unlisted = Array.isArray(raw.unlisted) ? raw.unlisted.filter((s): s is string => typeof s === "string" && s !== "") : [];
  if (unlisted.length) parsed.unlisted = unlisted;
  return parsed;
}

/** Per file: the counts of each state (files without hunks left out). */
export function fileReviews(changes: ChangesResult | undefined): FileReview[] {
  const reviews: FileReview[] = [];
  for (const file of changes?.files ?? []) {
    if (file.hunks.length === 0) continue;
    const count = (state: HunkState) => file.hunks.filter((h) => h.state === state).length;
    reviews.push({ uri: file.uri, path: file.path, pending: count("pending"), kept: count("kept"), undone: count("undone") });
  }
  return reviews;
}

/** Hunks that still wait for Keep or Undo. */
export function pendingHunks(changes: ChangesResult | undefined, uri?: string): Hunk[] {
  return (changes?.files ?? []).filter((f) => uri === undefined || f.uri === uri).flatMap((f) => f.hunks.filter((h) => h.state === "pending"));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The panel's line above Keep all / Undo all: "3 changes in 2 files wait for review". */
export function reviewSummary(reviews: FileReview[]): string {
  const pending = reviews.reduce((n, r) => n + r.pending, 0);
  const files = reviews.filter((r) => r.pending > 0).length;
  const kept = reviews.reduce((n, r) => n + r.kept, 0);
  const undone = reviews.reduce((n, r) => n + r.undone, 0);
  const done = [kept ? `${kept} kept` : "", undone ? `${undone} undone` : ""].filter((s) => s).join(", ");
  if (pending === 0) return done ? `Changes of the last turn reviewed: ${done}.` : "";
  const head = `${plural(pending, "change")} in ${plural(files, "file")} to review`;
  return done ? `${head} (${done}).` : `${head}.`;
}

/** A file's hunk in a few words, for the CodeLens and hover: "+3 −1 lines". */
export function hunkStats(hunk: Pick<Hunk, "oldText" | "newText">): string {
  const lines = (text: string) => (text === "" ? 0 : text.replace(/\n$/, "").split("\n").length);
  return `+${lines(hunk.newText)} −${lines(hunk.oldText)}`;
}

/** What a review did, in words for a notification: "undid 1 change in inventory.py". */
export function reviewOutcome(action: "keep" | "undo", before: ChangesResult | undefined, after: ChangesResult): string {
  const target: HunkState = action === "keep" ? "kept" : "undone";
  const was = new Map<string, HunkState>();
  for (const f of before?.files ?? []) for (const h of f.hunks) was.set(`${f.uri}#${h.id}`, h.state);
  const touched: string[] = [];
  let count = 0;
  for (const f of after.files) {
    const changed = f.hunks.filter((h) => h.state === target && was.get(`${f.uri}#${h.id}`) !== target).length;
    if (changed) {
      count += changed;
      touched.push(f.path.split(/[\\/]/).pop() ?? f.path);
    }
  }
  if (count === 0) return action === "keep" ? "nothing left to keep." : "nothing left to undo.";
  return `${action === "keep" ? "kept" : "undid"} ${plural(count, "change")} in ${touched.join(", ")}.`;
}

/** One CodeLens of the review, without `vscode`: its line, title, command and arguments. */
export interface LensSpec {
  line: number;
  title: string;
  command: string;
  arguments: unknown[];
}

/**
 * The review's CodeLenses of the file `uri`: a file line (Keep file / Undo file) on line 0, then
 * Keep / Undo on each pending hunk's first line. Kept, undone and range-less hunks (changed by the
 * person since) get none, so a file whose hunks are all reviewed has no lens at all.
 */
export function reviewLenses(changes: ReadonlyMap<string, ChangesResult>, uri: string): LensSpec[] {
  const hunks: { sessionId: string; hunk: Hunk; range: WireRange }[] = [];
  for (const [sessionId, result] of changes) {
    for (const hunk of pendingHunks(result, uri)) if (hunk.range) hunks.push({ sessionId, hunk, range: hunk.range });
  }
  if (hunks.length === 0) return [];
  const first = hunks[0].sessionId;
  const words = hunks.length === 1 ? "1 change" : `${hunks.length} changes`;
  const lenses: LensSpec[] = [
    { line: 0, title: `Cadenza: ${words} to review · Keep file`, command: "cadenza.keepFile", arguments: [first, uri] },
    { line: 0, title: "Undo file", command: "cadenza.undoFile", arguments: [first, uri] },
  ];
  for (const { sessionId, hunk, range } of hunks) {
    const line = range.start.line;
    lenses.push(
      { line, title: `Keep (${hunkStats(hunk)})`, command: "cadenza.keepHunk", arguments: [sessionId, hunk.id, uri] },
      { line, title: "Undo", command: "cadenza.undoHunk", arguments: [sessionId, hunk.id, uri] },
    );
  }
  return lenses;
}
