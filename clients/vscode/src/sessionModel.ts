/**
 * The view model of a session as the panel shows it: its state, its entries (text, tool calls,
 * movements, ends...) and the diffs the extension keeps for "Open diff". Types only; the
 * reducer that builds them from `cadenza/sessionUpdate` notifications is `sessions.ts`.
 */

import type { FileReview } from "./hunks";
import type { EndFix, PromptContext, ToolStatus } from "./protocol";
import type { ContextUse, TurnUsage } from "./usage";

export interface DiffRef {
  id: string;
  path: string;
  /** A file the change created. */
  created: boolean;
  added: number;
  removed: number;
}

export interface DiffRecord extends DiffRef {
  sessionId: string;
  oldText: string | null;
  newText: string;
}

export type Entry =
  | { kind: "text"; text: string }
  | { kind: "user"; text: string }
  | { kind: "resume"; after: string; reply: string }
  /** A follow-up prompt (`cadenza.promptSession` after a final end): the person's next message. */
  | { kind: "prompt"; text: string; chips?: string[]; steered?: boolean }
  | {
      kind: "tool";
      toolCallId: string;
      title: string;
      toolKind: string;
      status: ToolStatus | "unknown";
      input?: string;
      output?: string;
      diffs: DiffRef[];
    }
  | { kind: "movement"; movement: string; index?: number; reason?: string; workflow?: string }
  | { kind: "compaction"; tokensBefore?: number; tokensAfter?: number; messagesSummarized?: number }
  | { kind: "plan"; items: { content: string; status: string }[] }
  | {
      kind: "end";
      stopReason: string;
      message: string;
      steps?: number;
      missingInfo?: string;
      whyNoDefault?: string;
      /** The session waits for the person after this end (needs_user_input, waiting_human). */
      waiting?: boolean;
      url?: string;
      /** The turn's token usage in words (formatUsage), "" when none was reported. */
      usage?: string;
      /** The server's own text when `message` is a readable rewording of it (a provider error). */
      detail?: string;
      /** A button the end offers ("Pull model"). */
      fix?: EndFix;
    }
  | { kind: "note"; text: string; level: "info" | "warning" | "error" };

/** A message waiting for the running turn to end (or to be steered into it). */
export interface QueuedMessage {
  id: number;
  text: string;
  chips?: string[];
  context?: PromptContext;
  /** The server takes steers and the message has no mentions (a steer carries text only). */
  steerable?: boolean;
}

/** `waiting`: stopped with needs_user_input or waiting_human until the person answers. */
export type SessionState = "starting" | "running" | "cancelling" | "waiting" | "ended";

export interface SessionView {
  id: string;
  task: string;
  root?: string;
  state: SessionState;
  stopReason?: string;
  message?: string;
  steps?: number;
  startedAt: number;
  endedAt?: number;
  /** While waiting: what the person is asked (the missing information, or what to do in the browser). */
  question?: string;
  /** While waiting for needs_user_input: why the agent could not pick a default. */
  whyNoDefault?: string;
  /** While waiting for waiting_human: the page. */
  url?: string;
  /** The latest progress message (`plan · step 2/25`, `editing app.py`). */
  progress?: string;
  entries: Entry[];
  /** Absolute paths of the files the session changed, in the order first changed. */
  edited: string[];
  /** The session's model (`PROVIDER/MODEL`) when known (the `cadenza.model` setting). */
  model?: string;
  /** The model's context window when known (the `cadenza.contextSize` setting). */
  contextSize?: number;
  /** Token usage of the current (or last) turn, from `model_reply` and `usage_update`. */
  turnUsage?: TurnUsage;
  /** `turnUsage` in words, for the panel ("" before the first model reply). */
  usage?: string;
  /** The context in use at the latest reported request, across turns (the meter beside the input). */
  context?: ContextUse;
  /** The workflow of the next turn when chosen in the panel. */
  workflow?: string;
  /** The latest turn's changes per file, once the server listed them (`cadenza.listChanges`). */
  review?: FileReview[];
  /** The server's sentences on what the latest turn's commands changed that the review cannot list. */
  unlisted?: string[];
  /** The mentions of the first message (sent as `cadenza.startSession`'s `context`), shown by the task. */
  taskChips?: string[];
  /** The mentions of the prompt being sent, shown as chips on its message once the turn starts. */
  nextChips?: string[];
  /** The text of the prompt being sent (the server's `reply` may carry the context after it). */
  nextText?: string;
  /** Messages sent while the turn runs, for the next turns, oldest first (`queue.ts`). */
  queued?: QueuedMessage[];
  /** The turn was sent from the panel's input: its end needs no notification while the panel shows. */
  quiet?: boolean;
}
