/**
 * The review lists the agent's own edits (the checkpointed ones); what a command it ran
 * (run_command, tool kind `execute`) changed on disk is not in it, and the review says so.
 */

import type { Entry } from "../sessions";

/** How many commands the latest turn (from the last follow-up prompt on) ran (a failed one may have changed files too). */
export function turnCommands(entries: readonly Entry[]): number {
  let start = 0;
  entries.forEach((e, i) => {
    if (e.kind === "prompt") start = i;
  });
  return entries.slice(start).filter((e) => e.kind === "tool" && e.toolKind === "execute").length;
}

/** The review's sentence about them. */
export function unlistedText(commands: number): string {
  const what = commands === 1 ? "the command" : `the ${commands} commands`;
  return `Not listed for review: changes made by ${what} it ran (see Source Control for them).`;
}
