/**
 * The completion trigger at the caret of the panel's input: `@query` (a mention, after a space
 * or at the start) or `/query` (a slash command, only at the very start). Pure (no DOM).
 */

export interface Trigger {
  trigger: "@" | "/";
  query: string;
  /** Where the trigger character is. */
  start: number;
}

export function triggerAt(text: string, caret: number): Trigger | undefined {
  const before = text.slice(0, caret);
  const slash = /^\/([\w.-]*)$/.exec(before);
  if (slash) return { trigger: "/", query: slash[1], start: 0 };
  const at = /(^|\s)@([^\s@]*)$/.exec(before);
  if (at) return { trigger: "@", query: at[2], start: before.length - at[2].length - 1 };
  return undefined;
}

/** `text` with the trigger's word replaced by `insert` and a space; the new caret. */
export function replaceTrigger(text: string, caret: number, found: Trigger, insert: string): { text: string; caret: number } {
  const rest = text.slice(caret).replace(/^[^\s]*/, "");
  const head = `${text.slice(0, found.start)}${insert} `;
  return { text: head + rest.replace(/^ /, ""), caret: head.length };
}
