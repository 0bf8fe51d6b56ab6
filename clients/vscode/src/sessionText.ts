/**
 * Sessions in words: stop reasons, the end notification, the reply prompt, the session list's
 * quick pick items, the undo summary. Pure (no `vscode`).
 */

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

/**
 * Markdown as one line of plain text, for notifications (which show text as it is): the marks
 * (headings, emphasis, code, fences, list bullets, quotes, link targets) dropped, whitespace
 * collapsed. `_` is left alone (identifiers such as calc_total).
 */
export function plainText(markdown: string): string {
  return markdown
    .replace(/^\s*(```|~~~).*$/gm, "")
    .replace(/^\s{0,3}#{1,6}\s+/gm, "")
    .replace(/^\s*>\s?/gm, "")
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/gm, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\*\*(.+?)\*\*/g, "$1")
    .replace(/\*(\S(?:.*?\S)?)\*/g, "$1")
    .replace(/~~(.+?)~~/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}

/** The notification shown when a session ends (the message as plain text, at most 300 characters). */
export function endNotice(reason: string, message: string | undefined): string {
  const plain = message ? plainText(message) : "";
  const text = plain.length > 300 ? `${plain.slice(0, 299)}…` : plain;
  switch (reason) {
    case "end_turn":
      return text ? `Cadenza finished: ${text}` : "Cadenza finished the task.";
    case "cancelled":
      return "Cadenza: the task was cancelled.";
    default:
      return `Cadenza ${describeStopReason(reason)}${text ? `: ${text}` : "."}`;
  }
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

