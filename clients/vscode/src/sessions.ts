/**
 * Sessions as the panel shows them: a reducer from `cadenza/sessionUpdate` notifications to a
 * view model. Pure (no `vscode`): the panel renders `SessionView`s, the extension keeps the diff
 * texts (`DiffRecord`) for "Open diff" and never sends them to the webview.
 *
 * Update order (docs/protocol.md): a session's first update is a `movement`, its last a
 * `session_end`; a tool call is `tool_call`, then diff `tool_call_update`s, then the final
 * `tool_call_update`. A `session_end` with `needs_user_input` or `waiting_human` is not the
 * last: the session waits for the person, and `session_resume` starts it again (more updates
 * and another `session_end` follow). `user_message_chunk` is the person's text (the task, an
 * answer) when `cadenza.loadSession` replays a session. Unknown kinds are ignored; an update
 * for an unknown tool call creates it (robust to a lost `tool_call`).
 */

import { providerErrorText } from "./errors";
import type { DiffContentItem, SessionEndUpdate, SessionUpdate, ToolContent, ToolStatus } from "./protocol";
import type { DiffRecord, DiffRef, Entry, SessionView } from "./sessionModel";
import { candidatesLine, isWaitingReason } from "./sessionText";
import { turnStart } from "./turns";
import { clip, isDiff, isFix, lineStats, outputOf, promptText, stringify } from "./updateContent";
import { addModelReply, addUsageUpdate, contextUse, emptyUsage, formatUsage, type TurnUsage } from "./usage";

export { lineStats, promptText } from "./updateContent";
export { clipLine, describeState, isWaitingReason, describeStopReason, endNotice, replyPrompt, sessionItems, summaryLine, undoSummary } from "./sessionText";

export { OUTPUT_CHARS } from "./updateContent";
export type { DiffRecord, DiffRef, Entry, SessionState, SessionView } from "./sessionModel";

/** Stop reasons after which the task is done (the others need a look). */
export const SUCCESS_REASONS = new Set(["end_turn"]);


/** An entry after which a new turn's entries start (a steer is part of the running turn). */
function startsTurn(entry: Entry): boolean {
  return entry.kind === "resume" || entry.kind === "end" || (entry.kind === "prompt" && !entry.steered);
}

/** Holds every session of this window; `apply` is the reducer. */
export class SessionStore {
  private readonly sessions = new Map<string, SessionView>();
  private readonly diffs = new Map<string, DiffRecord>();
  private nextDiff = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /** Sessions, oldest first. */
  list(): SessionView[] {
    return [...this.sessions.values()];
  }

  get(id: string): SessionView | undefined {
    return this.sessions.get(id);
  }

  /** Sessions that run (or are starting or cancelling); not the waiting ones. */
  running(): SessionView[] {
    return this.list().filter((s) => s.state !== "ended" && s.state !== "waiting");
  }

  /** Sessions that wait for the person (needs_user_input, waiting_human). */
  waiting(): SessionView[] {
    return this.list().filter((s) => s.state === "waiting");
  }

  /** Sessions that can still be cancelled: running or waiting. */
  active(): SessionView[] {
    return this.list().filter((s) => s.state !== "ended");
  }

  latest(predicate: (s: SessionView) => boolean = () => true): SessionView | undefined {
    return this.list().reverse().find(predicate);
  }

  diff(id: string): DiffRecord | undefined {
    return this.diffs.get(id);
  }

  /** Record a session (or add what is known about it: its task once the start request answers). */
  add(id: string, fields: Partial<Omit<SessionView, "id" | "entries" | "edited">> = {}): SessionView {
    let session = this.sessions.get(id);
    if (!session) {
      session = { id, task: "", state: "running", startedAt: this.now(), entries: [], edited: [] };
      this.sessions.set(id, session);
    }
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined) (session as unknown as Record<string, unknown>)[key] = value;
    }
    return session;
  }

  /**
   * Forget what is shown of a session before `cadenza.loadSession` replays it; it moves to the
   * end of the list (the panel's bottom, where the person looks).
   */
  reset(id: string, fields: Partial<Omit<SessionView, "id" | "entries" | "edited">> = {}): SessionView {
    const known = this.sessions.get(id);
    if (known) {
      this.sessions.delete(id);
      this.sessions.set(id, known);
    }
    const session = this.add(id, fields);
    session.entries = [];
    session.edited = [];
    session.progress = undefined;
    session.context = undefined;
    for (const [diffId, diff] of this.diffs) if (diff.sessionId === id) this.diffs.delete(diffId);
    return session;
  }

  /**
   * After `cadenza.loadSession`: the state the server reports (`running`, a waiting stop
   * reason: the server revived it and prompts again, or a final one such as `interrupted`).
   */
  settle(id: string, state: string, question?: string): void {
    const session = this.sessions.get(id);
    if (!session || !state) return;
    if (state === "running") {
      session.state = "running";
    } else if (isWaitingReason(state)) {
      session.state = "waiting";
      session.stopReason = state;
      if (question) session.question = question;
    } else {
      session.state = "ended";
      session.stopReason = state;
    }
  }

  /** Forget the ended sessions (the panel's Clear). */
  clearEnded(): void {
    for (const [id, session] of this.sessions) {
      if (session.state === "ended") {
        this.sessions.delete(id);
        for (const [diffId, diff] of this.diffs) if (diff.sessionId === id) this.diffs.delete(diffId);
      }
    }
  }

  /** After `cadenza.restoreTurn`: the conversation as it was before the person's `turn`. */
  restored(id: string, turn: number, note: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    session.entries.splice(turnStart(session.entries, turn));
    session.state = "ended";
    session.progress = undefined;
    session.review = undefined;
    session.unlisted = undefined;
    session.entries.push({ kind: "note", text: note, level: "info" });
  }

  note(id: string, text: string, level: "info" | "warning" | "error" = "info"): void {
    this.add(id).entries.push({ kind: "note", text, level });
  }

  progress(id: string, message: string | undefined): void {
    const session = this.sessions.get(id);
    if (session && message) session.progress = message;
  }

  /** Mark a running session ended without a `session_end` (its server stopped). */
  abandon(id: string, why: string): void {
    const session = this.sessions.get(id);
    if (!session || session.state === "ended" || session.state === "waiting") return;
    session.state = "ended";
    session.stopReason = "server_exit";
    session.message = why;
    session.endedAt = this.now();
    session.entries.push({ kind: "end", stopReason: "server_exit", message: why });
  }

  /**
   * Apply one `cadenza/sessionUpdate`.
   *
   * @returns the `session_end` update when this one ended a run (the session then waits when
   *   its stop reason is needs_user_input or waiting_human, else it is over), else undefined.
   */
  apply(sessionId: string, update: SessionUpdate): SessionEndUpdate | undefined {
    const session = this.add(sessionId);
    if (session.state === "starting") session.state = "running";
    const u = update as Record<string, unknown>;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
      case "user_message_chunk": {
        const content = u.content as { type?: string; text?: unknown } | undefined;
        if (content?.type === "text" && typeof content.text === "string") {
          this.appendText(session, content.text, update.sessionUpdate === "user_message_chunk" ? "user" : "text");
        }
        return undefined;
      }
      case "session_resume": {
        session.state = "running";
        session.stopReason = undefined;
        session.message = undefined;
        session.endedAt = undefined;
        session.question = undefined;
        session.whyNoDefault = undefined;
        session.url = undefined;
        session.turnUsage = undefined;
        const reply = typeof u.reply === "string" ? u.reply : "";
        const after = String(u.after ?? "");
        // `kind` (answer, browser, prompt) says what resumed it; older servers: the stop reason.
        const kind = typeof u.kind === "string" ? u.kind : isWaitingReason(after) ? "answer" : "prompt";
        if (kind !== "prompt") {
          session.entries.push({ kind: "resume", after, reply });
        } else {
          // After a final end the person's text is a new prompt, not an answer.
          const entry: Entry = { kind: "prompt", text: promptText(reply, session.nextText) };
          if (session.nextChips?.length) entry.chips = session.nextChips;
          session.entries.push(entry);
        }
        session.nextChips = undefined;
        session.nextText = undefined;
        return undefined;
      }
      case "model_reply":
        addModelReply(this.turn(session), u);
        this.measured(session);
        return undefined;
      case "usage_update":
        addUsageUpdate(this.turn(session), u);
        this.measured(session);
        return undefined;
      case "tool_call":
      case "tool_call_update":
        this.applyTool(session, u);
        return undefined;
      case "movement":
        session.entries.push({
          kind: "movement",
          movement: String(u.movement ?? "?"),
          index: typeof u.index === "number" ? u.index : undefined,
          reason: typeof u.reason === "string" && u.reason ? u.reason : undefined,
          workflow: typeof u.workflow === "string" ? u.workflow : undefined,
        });
        return undefined;
      case "candidates":
        session.entries.push({ kind: "note", text: candidatesLine(u), level: "info" });
        return undefined;
      case "compaction":
        session.entries.push({
          kind: "compaction",
          tokensBefore: u.tokensBefore as number | undefined,
          tokensAfter: u.tokensAfter as number | undefined,
          messagesSummarized: u.messagesSummarized as number | undefined,
        });
        return undefined;
      case "plan": {
        const entries = Array.isArray(u.entries) ? (u.entries as { content?: unknown; status?: unknown }[]) : [];
        const items = entries.map((e) => ({ content: String(e.content ?? ""), status: String(e.status ?? "pending") }));
        // One list per turn: an update replaces it and moves it last (where the person looks).
        let turnStart = session.entries.length;
        while (turnStart > 0 && !startsTurn(session.entries[turnStart - 1])) turnStart--;
        const known = session.entries.findIndex((e, i) => i >= turnStart && e.kind === "plan");
        if (known >= 0) session.entries.splice(known, 1);
        session.entries.push({ kind: "plan", items });
        return undefined;
      }
      case "session_end": {
        const end = update as SessionEndUpdate;
        session.stopReason = String(end.stopReason ?? "unknown");
        const waiting = isWaitingReason(session.stopReason);
        session.state = waiting ? "waiting" : "ended";
        session.message = typeof end.message === "string" ? end.message : "";
        const raw = session.message;
        const readable = session.stopReason === "error" ? providerErrorText(raw, session.model) : undefined;
        if (readable) session.message = readable;
        session.steps = typeof end.steps === "number" ? end.steps : undefined;
        session.endedAt = this.now();
        session.progress = undefined;
        const missingInfo = typeof end.missingInfo === "string" ? end.missingInfo : undefined;
        const whyNoDefault = typeof end.whyNoDefault === "string" ? end.whyNoDefault : undefined;
        const url = typeof end.url === "string" && end.url ? end.url : undefined;
        session.question = waiting ? missingInfo || session.message || undefined : undefined;
        session.whyNoDefault = waiting ? whyNoDefault : undefined;
        session.url = waiting ? url : undefined;
        const entry: Entry = {
          kind: "end",
          stopReason: session.stopReason,
          message: session.message,
          steps: session.steps,
          missingInfo,
          whyNoDefault,
        };
        if (waiting) entry.waiting = true;
        if (url) entry.url = url;
        const usage = formatUsage(session.turnUsage, session.contextSize);
        if (usage) entry.usage = usage;
        if (readable) entry.detail = raw;
        if (isFix(end.fix)) entry.fix = end.fix;
        session.turnUsage = undefined;
        session.entries.push(entry);
        return end;
      }
      default:
        return undefined; // kinds this version does not know (repair, ...)
    }
  }

  /** After a usage update: the turn's usage line, and the context meter (which outlives the turn). */
  private measured(session: SessionView): void {
    session.usage = formatUsage(session.turnUsage, session.contextSize);
    session.context = contextUse(session.turnUsage, session.contextSize) ?? session.context;
  }

  private turn(session: SessionView): TurnUsage {
    if (!session.turnUsage) session.turnUsage = emptyUsage();
    return session.turnUsage;
  }

  private appendText(session: SessionView, text: string, kind: "text" | "user"): void {
    const last = session.entries[session.entries.length - 1];
    // A replay carries the person's answer twice: the `session_resume` with the reply as the
    // person wrote it, then the user message the model got (the server's wording around the
    // reply: "The person answered your question (…): …"). The resume line shows the reply.
    if (kind === "user" && (last?.kind === "resume" || last?.kind === "prompt")) return;
    if (last?.kind === kind) last.text += text;
    else session.entries.push({ kind, text });
  }

  private applyTool(session: SessionView, u: Record<string, unknown>): void {
    const toolCallId = String(u.toolCallId ?? "");
    let entry = session.entries.find(
      (e): e is Extract<Entry, { kind: "tool" }> => e.kind === "tool" && e.toolCallId === toolCallId,
    );
    if (!entry) {
      entry = {
        kind: "tool",
        toolCallId,
        title: "",
        toolKind: "other",
        status: "unknown",
        diffs: [],
      };
      session.entries.push(entry);
    }
    if (typeof u.title === "string" && u.title) entry.title = u.title;
    if (typeof u.kind === "string" && u.kind) entry.toolKind = u.kind;
    if (typeof u.status === "string") entry.status = u.status as ToolStatus;
    if (u.rawInput !== undefined) entry.input = clip(stringify(u.rawInput) ?? "", 1000);
    const content = Array.isArray(u.content) ? (u.content as ToolContent[]) : undefined;
    const output = outputOf(content);
    if (output !== undefined) entry.output = output;
    for (const item of content ?? []) {
      if (isDiff(item)) entry.diffs.push(this.recordDiff(session, item));
    }
    if (!entry.title) entry.title = entry.toolKind;
  }

  private recordDiff(session: SessionView, item: DiffContentItem): DiffRef {
    const id = `d${this.nextDiff++}`;
    const oldText = typeof item.oldText === "string" ? item.oldText : null;
    const ref: DiffRef = { id, path: item.path, created: oldText === null, ...lineStats(oldText, item.newText) };
    this.diffs.set(id, { ...ref, sessionId: session.id, oldText, newText: item.newText });
    if (!session.edited.includes(item.path)) session.edited.push(item.path);
    return ref;
  }
}
