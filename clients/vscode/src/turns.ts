/**
 * The person's messages in a session's conversation, numbered as `cadenza.restoreTurn` counts
 * them: the task is 1, then each follow-up and each answer (also "done in the browser"), in
 * order. A message steered into a running turn is part of that turn, not one of its own. Shared by the panel's webview (the Restore action on each message) and the store (the
 * conversation cut before a restored message).
 */

import type { Entry } from "./sessionModel";

/** Entry index → turn (1-based), for the entries that are the person's messages. */
export function messageTurns(entries: readonly Entry[]): Map<number, number> {
  const turns = new Map<number, number>();
  let turn = 1;
  let task = false;
  entries.forEach((entry, index) => {
    // A replay shows the task as its first "user" entry (later ones are steers); a live
    // session shows it in its header only.
    if (entry.kind === "user" && !task) turns.set(index, 1);
    else if ((entry.kind === "prompt" && !entry.steered) || entry.kind === "resume") turns.set(index, ++turn);
    task ||= entry.kind === "user";
  });
  return turns;
}

/** Where the conversation before `turn` ends: the index of the turn's entry (0 for the task). */
export function turnStart(entries: readonly Entry[], turn: number): number {
  for (const [index, number] of messageTurns(entries)) if (number === turn) return index;
  return turn <= 1 ? 0 : entries.length;
}
