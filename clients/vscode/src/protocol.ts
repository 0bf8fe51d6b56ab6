/**
 * The messages of Cadenza's editor face (docs/protocol.md) as TypeScript types.
 *
 * Only what this extension reads or sends. Fields the server may add later are allowed (the
 * protocol says clients ignore what they do not know), so every shape is open-ended.
 */

export const START_SESSION = "cadenza.startSession";
export const CANCEL_SESSION = "cadenza.cancelSession";
/** `cadenza.undoSession {sessionId}` → `{sessionId, files: [{path, action, oldPath?}], unchanged}`. */
export const UNDO_SESSION = "cadenza.undoSession";
/** Not in the server yet (DESIGN §3): wired, answered "not supported" until then. */
export const LIST_SESSIONS = "cadenza.listSessions";

export const SESSION_UPDATE = "cadenza/sessionUpdate";
export const ASK_USER = "cadenza/askUser";
/** Not sent by the server yet (DESIGN §3). */
export const REQUEST_PERMISSION = "cadenza/requestPermission";
/** Not sent by the server yet: the waiting_human prompt (same shape as the Neovim plugin's). */
export const WAITING_HUMAN = "cadenza/waitingHuman";

export interface StartSessionArgs {
  task: string;
  rootUri?: string;
  model?: string;
  workflow?: string;
}

export interface StartSessionResult {
  sessionId: string;
}

export interface TextContent {
  type: "text";
  text: string;
}

export interface ToolCallContentItem {
  type: "content";
  content: TextContent | { type: string; [key: string]: unknown };
}

export interface DiffContentItem {
  type: "diff";
  path: string;
  oldText: string | null;
  newText: string;
}

export type ToolContent = ToolCallContentItem | DiffContentItem | { type: string; [key: string]: unknown };

export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";

export interface AgentMessageChunk {
  sessionUpdate: "agent_message_chunk";
  content: TextContent | { type: string; [key: string]: unknown };
}

export interface ToolCallUpdateStart {
  sessionUpdate: "tool_call";
  toolCallId: string;
  title?: string;
  kind?: string;
  status?: ToolStatus;
  rawInput?: unknown;
  content?: ToolContent[];
  locations?: { path: string; line?: number }[];
}

export interface ToolCallUpdate {
  sessionUpdate: "tool_call_update";
  toolCallId: string;
  title?: string;
  kind?: string;
  status?: ToolStatus;
  rawInput?: unknown;
  content?: ToolContent[];
}

export interface MovementUpdate {
  sessionUpdate: "movement";
  workflow?: string;
  movement: string;
  index?: number;
  reason?: string;
}

export interface CompactionUpdate {
  sessionUpdate: "compaction";
  tokensBefore?: number;
  tokensAfter?: number;
  messagesSummarized?: number;
}

export interface PlanUpdate {
  sessionUpdate: "plan";
  entries?: { content: string; status?: string; priority?: string }[];
}

export interface SessionEndUpdate {
  sessionUpdate: "session_end";
  stopReason: string;
  message?: string;
  steps?: number;
  missingInfo?: string;
  whyNoDefault?: string;
}

export type SessionUpdate =
  | AgentMessageChunk
  | ToolCallUpdateStart
  | ToolCallUpdate
  | MovementUpdate
  | CompactionUpdate
  | PlanUpdate
  | SessionEndUpdate
  | { sessionUpdate: string; [key: string]: unknown };

export interface SessionUpdateParams {
  sessionId: string;
  update: SessionUpdate;
}

export interface AskUserParams {
  sessionId: string;
  question: string;
  whyNoDefault?: string;
  /** Not sent by the server today; a quick pick when present. */
  options?: (string | { label?: string; value?: string; description?: string })[];
}

export interface AskUserResult {
  answer: string | null;
}

export type PermissionOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: PermissionOptionKind | string;
}

export interface RequestPermissionParams {
  sessionId: string;
  toolCall: { toolCallId?: string; title?: string; kind?: string; rawInput?: unknown };
  options: PermissionOption[];
}

export type RequestPermissionResult = {
  outcome: { outcome: "selected"; optionId: string } | { outcome: "cancelled" };
};

export interface WaitingHumanParams {
  sessionId: string;
  uri?: string;
  url?: string;
  waitReason?: string;
}

export interface WaitingHumanResult {
  action: "continue" | "cancel";
}
