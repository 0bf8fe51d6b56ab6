// The panel's input (src/webview/panel.ts renders the thread above it): multi-line text (Enter
// sends, Shift+Enter a new line, Up/Down browse earlier messages), completion of `@` mentions
// (files, symbols, the selection, the Problems list) shown as chips, and of `/` commands; the
// model and mode pickers; New and History; the context meter of the conversation it continues
// ("12% of 32k"). The extension decides where a message goes.

import { contextMeter, type ContextUse } from "../usage";
import { PromptHistory } from "./history";
import { replaceTrigger, triggerAt, type Trigger } from "./trigger";

export interface Mention {
  kind: string;
  label: string;
  [key: string]: unknown;
}

interface Item {
  label?: string;
  name?: string;
  detail: string;
  mention?: Mention;
}

export interface ChatState {
  current?: string;
  models: { id: string; label: string }[];
  workflows: { name: string; description: string }[];
  model: string;
  workflow: string;
  /** The server restores to before a message (`cadenza.restoreTurn`): Restore is offered. */
  restore?: boolean;
}

/** What the composer shows about the conversation it continues. */
export interface Target {
  /** The conversation's first task, or undefined: the message starts a new session. */
  task?: string;
  state?: string;
  model?: string;
  workflow?: string;
  /** The context in use at the conversation's latest request. */
  context?: ContextUse;
}

type Post = (message: unknown) => void;

function byId<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

export class Composer {
  private readonly input = byId<HTMLTextAreaElement>("prompt");
  private readonly chipsBox = byId<HTMLElement>("chips");
  private readonly popup = byId<HTMLElement>("completion");
  private readonly targetLine = byId<HTMLElement>("target");
  private readonly modelPick = byId<HTMLSelectElement>("model");
  private readonly workflowPick = byId<HTMLSelectElement>("workflow");
  private readonly meter = byId<HTMLElement>("meter");
  private mentions: Mention[] = [];
  private items: Item[] = [];
  private selected = 0;
  private trigger: Trigger | undefined;
  private requestId = 0;
  private timer: number | undefined;

  constructor(
    private readonly post: Post,
    readonly history: PromptHistory,
    private readonly saveHistory: () => void,
  ) {
    this.input.addEventListener("input", () => {
      this.fit();
      this.lookup();
    });
    this.input.addEventListener("keydown", (e) => this.keydown(e));
    this.input.addEventListener("blur", () => window.setTimeout(() => this.close(), 150));
    byId("send").addEventListener("click", () => this.send());
    byId("new-session").addEventListener("click", () => post({ type: "newSession" }));
    byId("history").addEventListener("click", () => post({ type: "history" }));
    this.modelPick.addEventListener("change", () => post({ type: "choose", what: "model", value: this.modelPick.value }));
    this.workflowPick.addEventListener("change", () => post({ type: "choose", what: "workflow", value: this.workflowPick.value }));
  }

  /** The pickers, the line that says where the next message goes, and the context meter. */
  update(chat: ChatState | undefined, target: Target): void {
    if (!chat) return;
    this.showMeter(target.context, Boolean(target.task));
    const fallbackModel = target.model || chat.models[0]?.id || "the server's default";
    const models: [string, string][] = [["", `Model: ${fallbackModel}`], ...chat.models.map((m): [string, string] => [m.id, m.label]), ["other", "Other model…"]];
    fill(this.modelPick, models, chat.model);
    const workflows: [string, string][] = [
      ["", `Mode: ${target.workflow || "default"}`],
      ...chat.workflows.map((w): [string, string] => [w.name, w.description ? `${w.name} — ${w.description}` : w.name]),
    ];
    fill(this.workflowPick, workflows, chat.workflow);
    if (!target.task) {
      this.targetLine.textContent = "The next message starts a new session.";
      this.input.placeholder = "Describe a task… (@ mentions a file, / a command; Enter sends, Shift+Enter: new line)";
    } else {
      const task = target.task.split("\n")[0];
      const busy = target.state === "running" || target.state === "starting" || target.state === "cancelling";
      // A running turn queues the message for its end (Steer sends it into the turn).
      const what = target.state === "waiting" ? "Answers" : busy ? "Queues for" : "Continues";
      this.targetLine.textContent = `${what}: ${task.length > 60 ? `${task.slice(0, 59)}…` : task}`;
      this.input.placeholder =
        target.state === "waiting"
          ? "Your answer… (Enter sends)"
          : busy
            ? "Queue a message for when this turn ends… (Enter queues it; Steer sends it now)"
            : "Ask a follow-up… (@ mentions a file, / a command; Enter sends, Shift+Enter: new line)";
    }
  }

  private showMeter(use: ContextUse | undefined, session: boolean): void {
    const meter = contextMeter(use, session);
    this.meter.hidden = !meter;
    if (!meter) return;
    this.meter.className = `meter ${meter.level}`;
    this.meter.title = meter.title;
    this.meter.setAttribute("aria-valuetext", meter.text);
    if (meter.percent !== undefined) this.meter.setAttribute("aria-valuenow", String(meter.percent));
    else this.meter.removeAttribute("aria-valuenow");
    const bar = this.meter.querySelector<HTMLElement>(".meter-bar");
    if (bar) bar.hidden = meter.percent === undefined;
    const fill = this.meter.querySelector<HTMLElement>(".meter-fill");
    if (fill) fill.style.width = `${meter.percent ?? 0}%`;
    const text = this.meter.querySelector<HTMLElement>(".meter-text");
    if (text) text.textContent = meter.text;
  }

  /** Put `text` in the input (a restored message, to edit and send again), the cursor at its end. */
  setText(text: string): void {
    this.input.value = text;
    this.fit();
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  /** The extension's answer to a completion request (stale answers are dropped). */
  completions(requestId: number, items: Item[]): void {
    if (requestId !== this.requestId || !this.trigger) return;
    this.items = items;
    this.selected = 0;
    this.renderPopup();
  }

  private fit(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 200)}px`;
  }

  private send(): void {
    const text = this.input.value.trim();
    if (!text && this.mentions.length === 0) return;
    this.history.push(text);
    this.saveHistory();
    this.post({ type: "prompt", text, mentions: this.mentions });
    this.input.value = "";
    this.mentions = [];
    this.renderChips();
    this.close();
    this.fit();
  }

  private lookup(): void {
    const found = triggerAt(this.input.value, this.input.selectionStart ?? 0);
    this.trigger = found;
    if (!found) {
      this.close();
      return;
    }
    if (this.timer) window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => {
      this.requestId += 1;
      this.post({ type: "complete", requestId: this.requestId, trigger: found.trigger, query: found.query });
    }, 60);
  }

  private close(): void {
    this.items = [];
    this.popup.hidden = true;
    this.popup.replaceChildren();
  }

  private accept(index: number): void {
    const item = this.items[index];
    const found = this.trigger;
    if (!item || !found) return;
    const word = found.trigger === "/" ? `/${item.name ?? ""}` : `@${item.mention?.label ?? item.label ?? ""}`;
    const next = replaceTrigger(this.input.value, this.input.selectionStart ?? 0, found, word);
    this.input.value = next.text;
    this.input.setSelectionRange(next.caret, next.caret);
    const mention = item.mention;
    if (mention && !this.mentions.some((m) => m.kind === mention.kind && m.label === mention.label && m.uri === mention.uri)) {
      this.mentions.push(mention);
      this.renderChips();
    }
    this.trigger = undefined;
    this.close();
    this.input.focus();
  }

  private keydown(event: KeyboardEvent): void {
    const open = !this.popup.hidden && this.items.length > 0;
    if (open && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.selected = (this.selected + step + this.items.length) % this.items.length;
      this.renderPopup();
    } else if (open && (event.key === "Enter" || event.key === "Tab") && !event.shiftKey) {
      event.preventDefault();
      this.accept(this.selected);
    } else if (open && event.key === "Escape") {
      event.preventDefault();
      this.close();
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.send();
    } else if (event.key === "ArrowUp" && this.input.selectionStart === 0 && this.input.selectionEnd === 0) {
      this.recall(this.history.previous(this.input.value), event);
    } else if (event.key === "ArrowDown" && this.input.selectionStart === this.input.value.length) {
      this.recall(this.history.next(), event);
    }
  }

  private recall(text: string | undefined, event: KeyboardEvent): void {
    if (text === undefined) return;
    event.preventDefault();
    this.input.value = text;
    this.fit();
  }

  private renderPopup(): void {
    if (this.items.length === 0) {
      this.close();
      return;
    }
    const rows = this.items.map((item, i) => {
      const row = document.createElement("div");
      row.className = `completion-item${i === this.selected ? " selected" : ""}`;
      row.setAttribute("role", "option");
      const label = document.createElement("span");
      label.className = "completion-label";
      label.textContent = this.trigger?.trigger === "/" ? `/${item.name}` : `@${item.label}`;
      const detail = document.createElement("span");
      detail.className = "completion-detail";
      detail.textContent = item.detail;
      row.append(label, detail);
      row.addEventListener("mousedown", (e) => {
        e.preventDefault();
        this.accept(i);
      });
      return row;
    });
    this.popup.replaceChildren(...rows);
    this.popup.hidden = false;
  }

  private renderChips(): void {
    const chips = this.mentions.map((m, i) => {
      const chip = document.createElement("span");
      chip.className = `chip chip-${m.kind}`;
      chip.textContent = `@${m.label}`;
      chip.title = typeof m.uri === "string" ? m.uri : m.kind;
      const remove = document.createElement("button");
      remove.className = "chip-remove";
      remove.textContent = "×";
      remove.title = `Remove @${m.label}`;
      remove.addEventListener("click", () => {
        this.mentions.splice(i, 1);
        this.renderChips();
      });
      chip.append(remove);
      return chip;
    });
    this.chipsBox.replaceChildren(...chips);
  }
}

function fill(select: HTMLSelectElement, options: [string, string][], value: string): void {
  const same =
    select.options.length === options.length && options.every(([v, label], i) => select.options[i].value === v && select.options[i].text === label);
  if (!same) {
    select.replaceChildren(
      ...options.map(([v, label]) => {
        const option = document.createElement("option");
        option.value = v;
        option.text = label;
        return option;
      }),
    );
  }
  select.value = options.some(([v]) => v === value) ? value : "";
}
