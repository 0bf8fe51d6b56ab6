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
/**
 * `cadenza.restoreTurn {sessionId, turn}` → `RestoreTurnResult`: the session as it was before
 * the person's message `turn` (1-based); its files put back, its text given back for the input.
 */
export const RESTORE_TURN = "cadenza.restoreTurn";
/** `cadenza.replySession {sessionId, text}` → `{resumed, state}`: answer a waiting session (later). */
export const REPLY_SESSION = "cadenza.replySession";
/** `cadenza.listSessions {}` → `{sessions: SessionInfo[]}`, newest first. */
export const LIST_SESSIONS = "cadenza.listSessions";
/** `cadenza.loadSession {sessionId}` → replays the history as `cadenza/sessionUpdate`, then `{session, updates}`. */
export const LOAD_SESSION = "cadenza.loadSession";

/**
 * `cadenza.promptSession {sessionId, text, context?}`: the next turn of a session whose turn
 * ended. The panel's input uses it once the server advertises it in `executeCommandProvider`,
 * and starts a new session until then.
 */
export const PROMPT_SESSION = "cadenza.promptSession";
/** `cadenza.configureSession {sessionId, model?, workflow?}`: the model/workflow of the next turns. */
export const CONFIGURE_SESSION = "cadenza.configureSession";
/** `cadenza.steerSession {sessionId, text}`: the person's message into the running turn (-32803: none runs). */
export const STEER_SESSION = "cadenza.steerSession";
/** `cadenza.listChanges {sessionId}` → `ChangesResult`: the latest turn's changes as hunks. */
export const LIST_CHANGES = "cadenza.listChanges";
/** `cadenza.reviewChanges {sessionId, action, hunks?, uris?}` → `ChangesResult` after the action. */
export const REVIEW_CHANGES = "cadenza.reviewChanges";
/** `cadenza.listModels {}` → `ModelsResult`. */
export const LIST_MODELS = "cadenza.listModels";
/** `cadenza.pullModel {model}` (work-done progress) → `{model}`. */
export const PULL_MODEL = "cadenza.pullModel";
/** `cadenza.listCommands {rootUri?}` → `{commands: SlashCommand[]}`. */
export const LIST_COMMANDS = "cadenza.listCommands";
/** `cadenza.listPermissions {rootUri?}` → `PermissionsResult`: the rules that answer prompts. */
export const LIST_PERMISSIONS = "cadenza.listPermissions";
/** `cadenza.revokePermission {rule, decision, rootUri?}` → `{revoked}`: a remembered rule forgotten. */
export const REVOKE_PERMISSION = "cadenza.revokePermission";

/** One rule: `TOOL` or `TOOL:PATTERN` (e.g. `run_command:pytest *`). */
export interface PermissionRule {
  rule: string;
  decision: "allow" | "deny";
  /** `user`: the person's cadenza.toml; `workspace`: an "always" answer remembered for it. */
  source: "user" | "workspace";
  revocable: boolean;
}

export interface PermissionsResult {
  rules?: PermissionRule[];
  /** The path of the person's cadenza.toml. */
  userConfig?: string;
}

export const SESSION_UPDATE = "cadenza/sessionUpdate";
export const ASK_USER = "cadenza/askUser";
/** Before a gated tool runs (ACP's `session/request_permission` shape). */
export const REQUEST_PERMISSION = "cadenza/requestPermission";
/** The waiting_human prompt: act in the browser, then continue (after `window/showDocument`). */
export const WAITING_HUMAN = "cadenza/waitingHuman";

/**
 * Stop reasons after which a session waits for the person rather than ending: the server
 * prompts (`cadenza/askUser`, `cadenza/waitingHuman`), and the answer or `cadenza.replySession`
 * resumes it (`session_resume`). Every other stop reason is final.
 */
export const WAITING_REASONS: ReadonlySet<string> = new Set(["needs_user_input", "waiting_human"]);

/**
 * What `initialize` declares in `experimental.cadenza`: the server's own requests are answered
 * (codeIntelligence: the `cadenza/diagnostics|references|definition|rename` of intel.ts).
 */
export const CADENZA_CAPABILITIES = {
  askUser: true,
  requestPermission: true,
  waitingHuman: true,
  codeIntelligence: { diagnostics: true, references: true, definition: true, rename: true },
} as const;

export interface StartSessionArgs {
  task: string;
  rootUri?: string;
  model?: string;
  workflow?: string;
}

/** LSP `Position`/`Range` (in the negotiated position encoding; VS Code negotiates UTF-16). */
export interface WirePosition {
  line: number;
  character: number;
}
export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

/** The editor context of a prompt (`cadenza.promptSession`'s `context`). */
export interface PromptContext {
  selection?: { uri: string; range?: WireRange; text: string };
  files?: string[];
  symbols?: { name: string; uri: string; range: WireRange }[];
  problems?: { uri: string; message: string; range?: WireRange; severity?: number }[];
}

export type HunkState = "pending" | "kept" | "undone";

export interface Hunk {
  id: string;
  /**
   * Where the hunk's text now sits in the file (`newText`, or `oldText` once undone); absent
   * when the person changed the file at the hunk since (it can no longer be undone).
   */
  range?: WireRange;
  oldText: string;
  newText: string;
  state: HunkState;
}

export interface FileChanges {
  uri: string;
  path: string;
  hunks: Hunk[];
}

/** What `cadenza.listChanges` and `cadenza.reviewChanges` answer. */
export interface ChangesResult {
  sessionId: string;
  files: FileChanges[];
  /** Sentences on what the turn's commands changed that the review cannot list (a workspace too large to compare, files that are not text). */
  unlisted?: string[];
}

export interface ModelInfo {
  id: string;
  label?: string;
  local?: boolean;
  /** Whether a local model's weights are on disk; null for hosted models. */
  pulled?: boolean | null;
}

export interface WorkflowInfo {
  name: string;
  description?: string;
}

export interface ModelsResult {
  models: ModelInfo[];
  workflows: WorkflowInfo[];
  current: { model?: string; workflow?: string };
}

export interface SlashCommand {
  name: string;
  description?: string;
  hint?: string;
}

/** A button a `session_end` offers (a missing local model: "Pull model"). */
export interface EndFix {
  title: string;
  command: string;
  arguments?: unknown[];
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

export interface UserMessageChunk {
  sessionUpdate: "user_message_chunk";
  content: TextContent | { type: string; [key: string]: unknown };
}

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

/** Several replies tried against the tests on copies of the workspace; `kept` is 1-based. */
export interface CandidatesUpdate {
  sessionUpdate: "candidates";
  step?: number;
  tried: number;
  kept: number;
  /** Each reply's passing tests; null: it could not be judged. */
  passed: (number | null)[];
  /** Why each reply not judged was not ("" for one judged). */
  why?: string[];
  of?: number | null;
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
  /** With `waiting_human`: the browser session and the page. */
  browserSessionId?: string;
  url?: string;
  /** What the person can do about the end (`cadenza.pullModel` for a missing local model). */
  fix?: EndFix;
}

export interface SessionResumeUpdate {
  sessionUpdate: "session_resume";
  /** The stop reason the session waited in. */
  after: string;
  /** What the person gave (the answer; may be empty after waiting_human). */
  reply: string;
  /** What resumed it: an answer, "done in the browser", or a follow-up prompt. */
  kind?: "answer" | "browser" | "prompt" | string;
}

export type SessionUpdate =
  | UserMessageChunk
  | AgentMessageChunk
  | ToolCallUpdateStart
  | ToolCallUpdate
  | MovementUpdate
  | CompactionUpdate
  | CandidatesUpdate
  | PlanUpdate
  | SessionEndUpdate
  | SessionResumeUpdate
  | { sessionUpdate: string; [key: string]: unknown };

export interface SessionUpdateParams {
  sessionId: string;
  update: SessionUpdate;
}

export interface AskUserParams {
  sessionId: string;
  question: string;
  whyNoDefault?: string;
  /** Suggested answers (a quick pick, with free text always allowed). */
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
  /** Set when the call would change files that configure Cadenza, the editor, git or CI:
   * the person is asked every time, whatever `cadenza.permissions.default` says. */
  protectedPaths?: string[] | null;
}

export type RequestPermissionResult = {
  outcome: { outcome: "selected"; optionId: string } | { outcome: "cancelled" };
};

export interface WaitingHumanParams {
  sessionId: string;
  waitReason?: string;
  uri?: string;
  /** Older servers' name of `uri`. */
  url?: string;
  /** The server already opened `uri` (`window/showDocument`): do not open it again. */
  opened?: boolean;
}

export interface WaitingHumanResult {
  action: "continue" | "cancel";
}

export interface ReplySessionArgs {
  sessionId: string;
  text: string;
}

export interface ReplySessionResult {
  resumed: boolean;
  state: string;
}

/** One session of `cadenza.listSessions` (and `cadenza.loadSession`'s `session`). */
export interface SessionInfo {
  sessionId: string;
  task: string;
  /** `running`, `interrupted`, or its last stop reason (`needs_user_input`/`waiting_human`: it waits). */
  state: string;
  /** ISO 8601, UTC. */
  started: string;
  workflow: string;
  model: string;
  root: string;
  /** For a waiting session: what it asks. */
  question?: string;
}

export interface ListSessionsResult {
  sessions: SessionInfo[];
}

export interface LoadSessionResult {
  session: SessionInfo;
  updates: number;
}

/** The result of `cadenza.restoreTurn`. */
export interface RestoreTurnResult {
  sessionId: string;
  turn: number;
  /** The message as the person wrote it, for the input. */
  text: string;
  files?: { path: string; action: string; oldPath?: string }[];
  unchanged?: string[];
  /** Files the person changed since: left alone. */
  skipped?: { path: string; reason: string }[];
}
