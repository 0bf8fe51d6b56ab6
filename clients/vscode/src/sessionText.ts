/**
 * Sessions in words: stop reasons, the end notification (a one-line summary of the final
 * message), the progress notification's task, the reply prompt, the session list's quick pick
 * items, the undo summary. Pure (no `vscode`).
 */

import MarkdownIt from "markdown-it";

import { WAITING_REASONS, type SessionInfo } from "./protocol";
import type { SessionView } from "./sessions";

/** True for the stop reasons after which a session waits for the person (not final). */
export function isWaitingReason(reason: string | undefined): boolean {
  return reason !== undefined && WAITING_REASONS.has(reason);
}

/** A session's state in a few words (quick picks, the status bar). */
export function describeState(session: SessionView): string {
  if (session.state === "ended" || session.state === "waiting") return describeStopReason(session.stopReason ?? "");
  return session.progress ?? session.state;
}

/** The input box of a reply to a waiting session: the question, or what to do after the browser. */
export function replyPrompt(session: Pick<SessionView, "stopReason" | "question" | "whyNoDefault"> | undefined): {
  prompt: string;
  placeHolder: string;
  /** An empty reply is refused (a question needs an answer; "done in the browser" may be empty). */
  required: boolean;
} {
  if (session?.stopReason === "waiting_human") {
    return {
      prompt: session.question ? `${session.question}` : "The agent waits for you in the browser.",
      placeHolder: "What you did in the browser (empty: done), then Enter",
      required: false,
    };
  }
  const question = session?.question || "What should the agent know?";
  return {
    prompt: session?.whyNoDefault ? `${question} (${session.whyNoDefault})` : question,
    placeHolder: "Your answer (Escape: later)",
    required: true,
  };
}

/** Quick pick items of `cadenza.listSessions`' result `{sessions: SessionInfo[]}` (newest first). */
export function sessionItems(result: unknown): { label: string; description: string; detail: string; info: SessionInfo }[] {
  const raw = (result ?? {}) as { sessions?: unknown };
  const list = Array.isArray(raw.sessions) ? raw.sessions : Array.isArray(result) ? result : [];
  const items = [];
  for (const entry of list as Record<string, unknown>[]) {
    if (!entry || typeof entry.sessionId !== "string") continue;
    const info: SessionInfo = {
      sessionId: entry.sessionId,
      task: typeof entry.task === "string" ? entry.task : "",
      state: typeof entry.state === "string" ? entry.state : "",
      started: typeof entry.started === "string" ? entry.started : "",
      workflow: typeof entry.workflow === "string" ? entry.workflow : "",
      model: typeof entry.model === "string" ? entry.model : "",
      root: typeof entry.root === "string" ? entry.root : "",
      question: typeof entry.question === "string" && entry.question ? entry.question : undefined,
    };
    const started = info.started ? info.started.replace("T", " ").replace(/\.\d+/, "").replace(/(Z|\+00:00)$/, " UTC") : "";
    const details = [info.sessionId.slice(0, 8), started, info.model, info.root].filter((p) => p);
    items.push({
      label: info.task.split("\n")[0] || info.sessionId,
      description: info.question ? `${describeStopReason(info.state)}: ${info.question}` : describeStopReason(info.state),
      detail: details.join(" · "),
      info,
    });
  }
  return items;
}

/** A stop reason in words, for notifications and the panel. */
export function describeStopReason(reason: string): string {
  switch (reason) {
    case "end_turn":
      return "done";
    case "needs_user_input":
      return "needs your input";
    case "waiting_human":
      return "waits for you";
    case "failed":
      return "gave up";
    case "aborted":
      return "was aborted";
    case "cancelled":
      return "was cancelled";
    case "max_steps":
      return "stopped at the step limit";
    case "error":
      return "failed with an error";
    case "server_exit":
      return "ended: the server stopped";
    case "interrupted":
      return "was interrupted (the server stopped)";
    default:
      return reason;
  }
}

/** Longest summary of the model's final message in an end notification (characters). */
export const SUMMARY_CHARS = 120;
/** Longest error text in an end notification: an error's one sentence carries its fix. */
export const ERROR_CHARS = 240;

// HTML is parsed as HTML here so that it can be left out of a summary (the panel renders it as text).
const markdown = new MarkdownIt({ html: true });
type Token = ReturnType<MarkdownIt["parse"]>[number];

/** The text of an inline token's children: text and code spans; no HTML, no script or style content. */
function inlineText(children: readonly Token[]): string {
  let text = "";
  let hidden = false;
  for (const child of children) {
    if (child.type === "html_inline") {
      if (/^<(script|style)\b/i.test(child.content)) hidden = true;
      else if (/^<\/(script|style)\b/i.test(child.content)) hidden = false;
    } else if (hidden) {
      continue;
    } else if (child.type === "text" || child.type === "code_inline") {
      text += child.content;
    } else if (child.type === "softbreak" || child.type === "hardbreak") {
      text += " ";
    }
  }
  return text.replace(/\s+/g, " ").trim();
}

/** The plain text of the first paragraph (in a list or a quote too), else of the first heading. */
function firstBlockText(source: string): string {
  const tokens = markdown.parse(source, {});
  let heading = "";
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].type !== "inline") continue;
    const text = inlineText(tokens[i].children ?? []);
    if (!text) continue;
    if (tokens[i - 1]?.type !== "heading_open") return text;
    heading ||= text;
  }
  return heading;
}

/** `text` on one line, at most `max` characters: cut at a word, with "…". */
export function clipLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, "")}…`;
}

/**
 * A message as a one-line summary, for notifications (which show text as it is): the first
 * sentence of its first paragraph (a heading only when nothing else has text), as plain text
 * (no Markdown marks, no HTML, no code block), at most `max` characters. A paragraph that
 * announces more (ends with ":") ends with "…": the rest is in the panel.
 */
export function summaryLine(message: string, max = SUMMARY_CHARS): string {
  const block = firstBlockText(message);
  const [first] = new Intl.Segmenter("en", { granularity: "sentence" }).segment(block);
  const sentence = (first?.segment ?? "").trim();
  return clipLine(sentence.endsWith(":") ? `${sentence.slice(0, -1).trimEnd()}…` : sentence, max);
}

/** The notification shown when a session ends: its message as a one-line summary. */
export function endNotice(reason: string, message: string | undefined): string {
  const text = message ? summaryLine(message, reason === "end_turn" ? SUMMARY_CHARS : ERROR_CHARS) : "";
  switch (reason) {
    case "end_turn":
      return text ? `Cadenza finished: ${text}` : "Cadenza finished the task.";
    case "cancelled":
      return "Cadenza: the task was cancelled.";
    default:
      return `Cadenza ${describeStopReason(reason)}${text ? `: ${text}` : "."}`;
  }
}

/** The person's task as a progress notification shows it: its first line, shortened. */
export function taskLabel(task: string, max = 60): string {
  const line = task.split("\n").find((l) => l.trim()) ?? "";
  return clipLine(line, max);
}

/** What `cadenza.undoSession` answered, in words: `{sessionId, files: [{path, action, oldPath?}], unchanged}`. */
export function undoSummary(result: unknown): string {
  const r = (result ?? {}) as { files?: { path?: string; action?: string; oldPath?: string }[]; unchanged?: string[] };
  const files = Array.isArray(r.files) ? r.files : [];
  const unchanged = Array.isArray(r.unchanged) ? r.unchanged : [];
  const words: Record<string, string> = { restored: "restored", removed: "removed", recreated: "recreated", moved_back: "moved back" };
  const parts = files.map((f) =>
    f.action === "moved_back" && f.oldPath
      ? `${f.oldPath} moved back to ${f.path}`
      : `${words[f.action ?? ""] ?? f.action ?? "changed"} ${f.path ?? "?"}`,
  );
  let text = parts.length ? `undid the session: ${parts.join(", ")}` : "the session had nothing left to undo";
  if (unchanged.length) text += ` (already as before: ${unchanged.join(", ")})`;
  return `${text}.`;
}


/**
 * A `candidates` update in words: several replies were tried against the tests on copies of the
 * workspace, and which one was kept, with each one's passing tests, or why it was not judged
 * (`why`, the server's words for each reply).
 */
export function candidatesLine(update: {
  tried?: unknown;
  kept?: unknown;
  passed?: unknown;
  of?: unknown;
  why?: unknown;
}): string {
  const tried = typeof update.tried === "number" ? update.tried : 0;
  const kept = typeof update.kept === "number" ? update.kept : 0;
  const passed = Array.isArray(update.passed) ? update.passed.map((n) => (typeof n === "number" ? n : null)) : [];
  const why = Array.isArray(update.why) ? update.why.map((w) => (typeof w === "string" ? w : "")) : [];
  const notJudged = (i: number): string => (why[i] ? `not judged: ${why[i]}` : "not judged");
  const best = passed[kept - 1];
  if (best === undefined || best === null) {
    const reasons = [...new Set(why.filter((w) => w))];
    const because = reasons.length ? ` (${reasons.join("; ")})` : "";
    return `Tried ${tried} replies against the tests; none could be judged${because}, kept reply ${kept}.`;
  }
  const of = typeof update.of === "number" ? ` of ${update.of}` : "";
  const entries = passed.map((n, i) => (n === null ? notJudged(i) : String(n)));
  // A reason holds commas of its own: then the replies are parted by semicolons.
  const each = entries.join(entries.some((e) => e.includes(":")) ? "; " : ", ");
  return `Tried ${tried} replies against the tests on copies of the workspace; kept reply ${kept}: ${best}${of} tests pass with it (each reply: ${each}).`;
}
