// The Cadenza panel's webview: renders the sessions posted by the extension (src/panel.ts).
// Bundled by esbuild into dist/webview.js (a browser script). Model text (the agent's messages,
// the final message) is Markdown, rendered and sanitized by markdown.ts; everything else is
// inserted with textContent.

import type { Entry, SessionView } from "../sessions";
import { messageTurns } from "../turns";
import { Composer, type ChatState } from "./composer";
import { PromptHistory } from "./history";
import { markdownElement } from "./markdown";

interface PanelState {
  sessions?: SessionView[];
  history?: string[];
}

declare function acquireVsCodeApi(): {
  postMessage(message: unknown): void;
  getState(): PanelState | undefined;
  setState(state: PanelState): void;
};

const vscode = acquireVsCodeApi();
const root = document.getElementById("sessions") as HTMLElement;
const empty = document.getElementById("empty") as HTMLElement;
document.getElementById("run")?.addEventListener("click", () => vscode.postMessage({ type: "run" }));

// The input at the bottom (composer.ts): the extension sends its message to the current
// conversation (a follow-up), to a waiting session (the answer) or to a new session.
const history = new PromptHistory(50, vscode.getState()?.history ?? []);
let sessions: SessionView[] = [];
let chat: ChatState | undefined;
const composer = new Composer((m) => vscode.postMessage(m), history, saveState);

function saveState(): void {
  vscode.setState({ sessions, history: history.list() });
}

// Links in rendered Markdown open outside the webview (the extension checks the scheme again).
document.addEventListener("click", (event) => {
  const link = (event.target as Element | null)?.closest?.("a");
  if (!link) return;
  event.preventDefault();
  const href = link.getAttribute("href");
  if (href) vscode.postMessage({ type: "openLink", href });
});

const STOP: Record<string, string> = {
  end_turn: "done",
  needs_user_input: "needs your input",
  waiting_human: "waits for you",
  failed: "gave up",
  aborted: "aborted",
  cancelled: "cancelled",
  max_steps: "step limit reached",
  error: "error",
  server_exit: "server stopped",
  interrupted: "interrupted",
};
const PLAN_BOX: Record<string, string> = { completed: "☑", in_progress: "◐", pending: "☐" };
const STATUS_ICON: Record<string, string> = { pending: "○", in_progress: "◐", completed: "✓", failed: "✗", unknown: "·" };

function el(tag: string, className?: string, text?: unknown): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function button(label: string, onClick: () => void, title?: string): HTMLElement {
  const b = el("button", "link", label);
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

function basename(p: string): string {
  const parts = String(p).split(/[\\/]/);
  return parts[parts.length - 1];
}

function renderTool(entry: Extract<Entry, { kind: "tool" }>): HTMLElement {
  const box = el("div", `tool status-${entry.status} kind-${entry.toolKind}`);
  box.dataset.toolCallId = entry.toolCallId;
  const head = el("div", "tool-head");
  head.append(el("span", "icon", STATUS_ICON[entry.status] || "·"), el("span", "tool-title", entry.title));
  if (entry.status === "failed") head.append(el("span", "badge failed", "failed"));
  box.append(head);
  for (const diff of entry.diffs) {
    const row = el("div", "diff");
    row.dataset.diffId = diff.id;
    const file = button(basename(diff.path), () => vscode.postMessage({ type: "openFile", path: diff.path }), diff.path);
    file.classList.add("file");
    row.append(
      file,
      el("span", "stats", diff.created ? `new file, +${diff.added}` : `+${diff.added} −${diff.removed}`),
      button("Open diff", () => vscode.postMessage({ type: "openDiff", diffId: diff.id })),
    );
    box.append(row);
  }
  if (entry.output || entry.input) {
    const details = el("details", "tool-details");
    details.append(el("summary", "", "details"));
    if (entry.input) details.append(el("pre", "input", entry.input));
    if (entry.output) details.append(el("pre", "output", entry.output));
    box.append(details);
  }
  return box;
}

function renderEntry(entry: Entry): HTMLElement {
  switch (entry.kind) {
    case "text":
      return markdownElement(entry.text, "agent-text");
    case "user": {
      const node = el("div", "user-text");
      node.append(el("span", "who", "You: "), el("span", "", entry.text));
      return node;
    }
    case "resume": {
      // The person's answer to a question (or "done in the browser"): not a new prompt.
      const what = entry.after === "waiting_human" ? "You are done in the browser" : "You answered";
      const node = el("div", "resume", what);
      if (entry.reply) node.append(el("span", "reply", `: ${entry.reply}`));
      return node;
    }
    case "prompt": {
      // A follow-up: the person's next message in the conversation (or one steered into a turn).
      const node = el("div", `user-text prompt${entry.steered ? " steered" : ""}`);
      node.append(el("span", "who", entry.steered ? "You (while it worked): " : "You: "), el("span", "", entry.text));
      if (entry.chips?.length) {
        const chips = el("div", "chips sent");
        for (const chip of entry.chips) chips.append(el("span", "chip", chip));
        node.append(chips);
      }
      return node;
    }
    case "tool":
      return renderTool(entry);
    case "movement": {
      // Plain text (a label between the steps of a workflow), nothing to click.
      const node = el("div", "movement");
      node.append(el("span", "movement-name", entry.movement));
      if (entry.index && entry.index > 1) node.append(el("span", "movement-index", ` (movement ${entry.index})`));
      if (entry.reason) node.append(el("span", "reason", ` — ${entry.reason}`));
      return node;
    }
    case "compaction":
      return el(
        "div",
        "note",
        `Context compacted: ${entry.messagesSummarized ?? "?"} messages summarized (${entry.tokensBefore ?? "?"} → ${entry.tokensAfter ?? "?"} tokens)`,
      );
    case "plan": {
      // The agent's to-do list as a checklist: done, in progress, to do.
      const done = entry.items.filter((i) => i.status === "completed").length;
      const box = el("div", "plan");
      box.append(el("div", "plan-head", `Plan · ${done} of ${entry.items.length} done`));
      const list = el("ul", "plan-items");
      for (const item of entry.items) {
        const row = el("li", `plan-item plan-${item.status}`);
        row.append(el("span", "plan-box", PLAN_BOX[item.status] ?? "☐"), el("span", "plan-text", item.content));
        list.append(row);
      }
      box.append(list);
      return box;
    }
    case "end": {
      const node = el("div", `end stop-${entry.stopReason}${entry.waiting ? " waiting" : ""}`);
      node.append(el("strong", "", `${STOP[entry.stopReason] || entry.stopReason}`));
      if (entry.steps !== undefined) node.append(el("span", "steps", ` · ${entry.steps} step${entry.steps === 1 ? "" : "s"}`));
      if (entry.message) {
        // An error's message is the server's text (not the model's Markdown): shown as is.
        node.append(
          entry.stopReason === "error" || entry.stopReason === "server_exit"
            ? el("div", "end-message plain", entry.message)
            : markdownElement(entry.message, "end-message"),
        );
      }
      if (entry.missingInfo) node.append(el("div", "missing", `Needs: ${entry.missingInfo}`));
      if (entry.whyNoDefault) node.append(el("div", "missing", `Why: ${entry.whyNoDefault}`));
      if (entry.url) node.append(el("div", "missing", `Page: ${entry.url}`));
      if (entry.detail) {
        const details = el("details", "error-details");
        details.append(el("summary", "", "what the server said"), el("pre", "", entry.detail));
        node.append(details);
      }
      if (entry.usage) node.append(el("div", "usage", entry.usage));
      return node;
    }
    case "note":
      return el("div", `note ${entry.level}`, entry.text);
    default:
      return el("div", "note", JSON.stringify(entry));
  }
}

function renderReview(session: SessionView): HTMLElement | undefined {
  const files = session.review ?? [];
  // What the turn's commands changed is listed like the edits; the server says what it could not list.
  const unlisted = session.unlisted ?? [];
  if (files.length === 0 && unlisted.length === 0) return undefined;
  const pending = files.filter((f) => f.pending > 0);
  const box = el("div", "review");
  const notes = () => unlisted.map((text) => el("div", "review-unlisted", text));
  if (files.length === 0) {
    box.append(...notes());
    return box;
  }
  const kept = files.reduce((n, f) => n + f.kept, 0);
  const undone = files.reduce((n, f) => n + f.undone, 0);
  const count = pending.reduce((n, f) => n + f.pending, 0);
  const done = [kept ? `${kept} kept` : "", undone ? `${undone} undone` : ""].filter((t) => t).join(", ");
  const head = el(
    "div",
    "review-head",
    count
      ? `${count} change${count === 1 ? "" : "s"} in ${pending.length} file${pending.length === 1 ? "" : "s"} to review${done ? ` (${done})` : ""}`
      : `Changes reviewed${done ? `: ${done}` : ""}`,
  );
  box.append(head);
  if (count) {
    const post = (action: string, uris?: string[]) => vscode.postMessage({ type: "review", sessionId: session.id, action, uris });
    const actions = el("div", "review-actions");
    const keep = el("button", "review-keep", "Keep all");
    keep.addEventListener("click", () => post("keep"));
    const undo = el("button", "review-undo secondary", "Undo all");
    undo.addEventListener("click", () => post("undo"));
    actions.append(keep, undo);
    box.append(actions);
    for (const file of pending) {
      const row = el("div", "review-file");
      row.dataset.uri = file.uri;
      const open = button(basename(file.path), () => vscode.postMessage({ type: "openFile", path: file.path }), file.path);
      row.append(
        open,
        el("span", "stats", `${file.pending} to review`),
        button("Keep", () => post("keep", [file.uri]), `Keep the changes in ${file.path}`),
        button("Undo", () => post("undo", [file.uri]), `Undo the changes in ${file.path}`),
      );
      box.append(row);
    }
  }
  box.append(...notes());
  return box;
}


/** Messages sent while the turn runs: each with Steer (into the turn now) and × (not sent). */
function renderQueue(session: SessionView): HTMLElement | undefined {
  if (!session.queued?.length) return undefined;
  const box = el("div", "queue");
  const running = session.state === "running" || session.state === "starting";
  for (const message of session.queued) {
    const row = el("div", "queued");
    row.dataset.queueId = String(message.id);
    row.append(el("span", "who", "Queued: "), el("span", "queued-text", message.text));
    for (const chip of message.chips ?? []) row.append(el("span", "chip", chip));
    const post = (type: string) => vscode.postMessage({ type, sessionId: session.id, queueId: message.id });
    if (running && message.steerable) {
      const steer = button("Steer", () => post("steer"), "Send it into the running turn now: the agent reads it at its next step");
      steer.classList.add("queue-steer");
      row.append(steer);
    }
    const remove = button("×", () => post("unqueue"), "Remove from the queue (not sent)");
    remove.classList.add("queue-remove");
    remove.setAttribute("aria-label", "Remove from the queue");
    row.append(remove);
    box.append(row);
  }
  box.append(el("div", "queue-note", "Sent when the turn ends."));
  return box;
}

/** "Restore" on one of the person's messages: the session as it was before it, the message back in the input. */
function restoreButton(session: SessionView, turn: number): HTMLElement {
  const b = button(
    "Restore",
    () => vscode.postMessage({ type: "restore", sessionId: session.id, turn }),
    "Restore to before this message: put back the files it and the later messages changed, and the message in the input to edit and send again",
  );
  b.classList.add("restore");
  b.dataset.turn = String(turn);
  return b;
}

function renderSession(session: SessionView): HTMLElement {
  const current = chat?.current === session.id;
  const section = el("section", `session state-${session.state}${current ? " current" : ""}`);
  section.dataset.sessionId = session.id;
  if (session.stopReason) section.dataset.stopReason = session.stopReason;
  const header = el("header", "session-head");
  const task = el("div", "task", session.task.split("\n")[0] || "(task)");
  task.title = session.task;
  const waiting = session.state === "waiting";
  const ended = session.state === "ended" || waiting;
  const state = ended ? STOP[session.stopReason ?? ""] || session.stopReason : session.state;
  header.append(el("span", `badge state ${session.state} ${ended ? session.stopReason || "" : ""}`, state), task);
  if (session.taskChips?.length) {
    const chips = el("div", "chips sent");
    for (const chip of session.taskChips) chips.append(el("span", "chip", chip));
    header.append(chips);
  }
  if (!current && session.state === "ended") {
    header.append(button("Continue here", () => vscode.postMessage({ type: "focus", sessionId: session.id }), "Send the next message to this conversation"));
  }
  if (waiting && session.stopReason === "waiting_human") {
    header.append(
      button("Continue", () => vscode.postMessage({ type: "continue", sessionId: session.id }), "Done in the browser: let the agent go on"),
    );
  }
  if (waiting) {
    header.append(
      button("Reply…", () => vscode.postMessage({ type: "reply", sessionId: session.id }), "Answer the session (cadenza.replySession)"),
    );
  }
  if (session.state === "running" || session.state === "starting" || waiting) {
    header.append(button("Cancel", () => vscode.postMessage({ type: "cancel", sessionId: session.id })));
  }
  // Restore is offered while no turn runs (the server refuses a running session).
  const restorable = ended && chat?.restore === true;
  const turns = restorable ? messageTurns(session.entries) : new Map<number, number>();
  if (restorable && ![...turns.values()].includes(1)) header.append(restoreButton(session, 1)); // the task
  section.append(header);
  const running = session.state !== "ended" && !waiting;
  if (running && session.progress) section.append(el("div", "progress", session.progress));
  if (running && session.usage) section.append(el("div", "usage live", session.usage));
  const body = el("div", "entries");
  let lastText = "";
  for (const [index, entry] of session.entries.entries()) {
    // The final answer is both streamed text and the end's message: show it once.
    if (entry.kind === "end" && entry.message && entry.message.trim() === lastText.trim()) {
      body.append(renderEntry({ ...entry, message: "" }));
      continue;
    }
    if (entry.kind === "text") lastText = entry.text;
    else lastText = "";
    const node = renderEntry(entry);
    const turn = turns.get(index);
    if (turn !== undefined) {
      // On a line of its own under the message: the message's text stays as written.
      const actions = el("div", "message-actions");
      actions.append(restoreButton(session, turn));
      node.append(actions);
    }
    if (entry.kind === "end" && entry.fix) {
      const fix = entry.fix;
      node.append(button(fix.title, () => vscode.postMessage({ type: "fix", sessionId: session.id }), `Cadenza: ${fix.title}`));
    }
    body.append(node);
  }
  section.append(body);
  const queued = renderQueue(session);
  if (queued) section.append(queued);
  const review = session.state === "ended" ? renderReview(session) : undefined;
  if (review) section.append(review);
  return section;
}

function atBottom(): boolean {
  return window.innerHeight + window.scrollY >= document.body.scrollHeight - 30;
}

function render(sessions: SessionView[]): void {
  const stick = atBottom();
  empty.style.display = sessions.length ? "none" : "";
  root.replaceChildren(...sessions.map(renderSession));
  if (stick) window.scrollTo(0, document.body.scrollHeight);
}

window.addEventListener("message", (event: MessageEvent) => {
  const message = event.data as
    | { type?: string; sessions?: SessionView[]; chat?: ChatState; requestId?: number; items?: [] }
    | undefined;
  if (message && message.type === "state" && Array.isArray(message.sessions)) {
    sessions = message.sessions;
    chat = message.chat;
    saveState();
    render(message.sessions);
    const target = chat?.current ? sessions.find((s) => s.id === chat?.current) : undefined;
    composer.update(chat, { task: target?.task, state: target?.state, model: target?.model, workflow: target?.workflow, context: target?.context });
  } else if (message && message.type === "setInput" && typeof (message as { text?: unknown }).text === "string") {
    composer.setText((message as { text: string }).text);
  } else if (message && message.type === "completions" && typeof message.requestId === "number") {
    composer.completions(message.requestId, Array.isArray(message.items) ? message.items : []);
  }
});

const saved = vscode.getState();
if (saved && saved.sessions) {
  sessions = saved.sessions;
  render(saved.sessions);
}
vscode.postMessage({ type: "ready" });
