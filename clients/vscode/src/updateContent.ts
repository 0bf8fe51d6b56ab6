/**
 * The parts of `cadenza/sessionUpdate`s the panel reads: a tool call's text output (clipped),
 * its diffs and their line counts, an end's fix, a follow-up's text without the editor context.
 * Pure (no `vscode`).
 */

import type { DiffContentItem, EndFix, ToolContent } from "./protocol";

/** Longest tool output kept for the panel, in characters. */
export const OUTPUT_CHARS = 4000;

function countLines(text: string | null): number {
  if (!text) return 0;
  const lines = text.split("\n");
  return text.endsWith("\n") ? lines.length - 1 : lines.length;
}

/**
 * Lines added and removed between two texts: the lines outside the common prefix and suffix
 * (the server's edits are minimal, so this is what a diff view shows for one hunk).
 */
export function lineStats(oldText: string | null, newText: string): { added: number; removed: number } {
  if (oldText === null) return { added: countLines(newText), removed: 0 };
  const a = oldText.split("\n");
  const b = newText.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return { added: endB - start, removed: endA - start };
}

export function stringify(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

export function clip(text: string, limit = OUTPUT_CHARS): string {
  return text.length > limit ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters)` : text;
}

export function outputOf(content: ToolContent[] | undefined): string | undefined {
  const parts: string[] = [];
  for (const item of content ?? []) {
    if (item.type === "content") {
      const inner = (item as { content?: { type?: string; text?: unknown } }).content;
      if (inner && inner.type === "text" && typeof inner.text === "string") parts.push(inner.text);
    }
  }
  return parts.length ? clip(parts.join("\n")) : undefined;
}

/** Where the editor context starts in a prompt as the model got it (docs/protocol.md). */
const CONTEXT_MARK = "\n\nContext from the editor:";

/** A follow-up as the person wrote it: without the editor context the server put after it. */
export function promptText(reply: string, sent: string | undefined): string {
  // (The server may put a note before it too: the changes the person undid.)
  if (sent && reply.includes(sent)) return sent;
  const cut = reply.indexOf(CONTEXT_MARK);
  return cut >= 0 ? reply.slice(0, cut) : reply;
}

export function isFix(value: unknown): value is EndFix {
  const fix = value as Partial<EndFix> | undefined;
  return !!fix && typeof fix.title === "string" && typeof fix.command === "string" && (fix.arguments === undefined || Array.isArray(fix.arguments));
}

export function isDiff(item: ToolContent): item is DiffContentItem {
  return (
    item.type === "diff" &&
    typeof (item as DiffContentItem).path === "string" &&
    typeof (item as DiffContentItem).newText === "string"
  );
}

