/**
 * The panel as a conversation: where the input's next message goes (the answer of a waiting
 * session, the next turn of the current conversation with `cadenza.promptSession`, or a new
 * session; while a turn runs it is queued: `queue.ts`), with its @-mentions as `context`; the model and mode (workflow) pickers, applied to
 * the next turn with `cadenza.configureSession` or to a new session through `cadenza.startSession`;
 * the completion lists of `@` and `/`; "Pull model" when a session ended for a missing model.
 */

import * as vscode from "vscode";

import { errorText } from "./errors";
import { Mentions, parseMentions, type Suggestion } from "./mentions";
import {
  CONFIGURE_SESSION,
  LIST_COMMANDS,
  LIST_MODELS,
  PROMPT_SESSION,
  RESTORE_TURN,
  type EndFix,
  type ModelInfo,
  type ModelsResult,
  type PromptContext,
  type RestoreTurnResult,
  type SlashCommand,
  type WorkflowInfo,
} from "./protocol";
import { MessageQueue } from "./queue";
import type { SessionStore, SessionView } from "./sessions";

/** What the extension does for the chat (implemented by extension.ts). */
export interface ChatHost {
  store: SessionStore;
  changed(): void;
  log(line: string): void;
  advertised(): readonly string[] | undefined;
  /** Run a server command (starting the server first); throws the JSON-RPC error. */
  execute(command: string, argument: object, workDoneToken?: string): Promise<unknown>;
  /** Start a new session (`context`: its mentions); its id, or undefined after a message. */
  start(task: string, options: StartOptions): Promise<string | undefined>;
  /** Answer a waiting session. */
  reply(sessionId: string, text: string): Promise<void>;
  /** The `cadenza.model` / `cadenza.workflow` settings. */
  settings(): { model: string; workflow: string };
  /** Run a server command with a progress notification (a fix such as Pull model). */
  runWithProgress(title: string, command: string, argument: object): Promise<unknown>;
  /** Put `text` in the panel's input (a restored message, to edit and send again). */
  setInput(text: string): void;
  /** Drop the session's review from the editor (a restore ends the turn it showed). */
  forgetReview(sessionId: string): void;
}

/** How the panel starts a session: the pickers' choices, and the first message's mentions. */
export interface StartOptions {
  model?: string;
  workflow?: string;
  /** Add the active editor's place (file, cursor, selection) to the task: when nothing is mentioned. */
  withEditorContext: boolean;
  /** The mentions, as `cadenza.startSession`'s `context` (the server reads the files). */
  context?: PromptContext;
}

/** What the panel shows above the input (posted with the sessions). */
export interface ChatState {
  /** The conversation the next message continues (none: it starts a new session). */
  current?: string;
  models: { id: string; label: string }[];
  workflows: { name: string; description: string }[];
  /** The choice for the next turn ("" = the session's, or the settings' for a new one). */
  model: string;
  workflow: string;
  /** The server restores to before a message (`cadenza.restoreTurn`). */
  restore: boolean;
}

const BUILT_IN_WORKFLOWS: WorkflowInfo[] = [
  { name: "default", description: "one movement: work" },
  { name: "plan-implement-review", description: "plan (read-only), implement, review" },
];

/** A picker's line: the server's label (the model, where it runs, "default"), else the id. */
export function modelLabel(m: ModelInfo): string {
  const base = m.label || m.id;
  return m.local && m.pulled === false ? `${base} — not downloaded` : base;
}

export class Chat {
  private currentId: string | undefined;
  private fresh = false;
  private model = "";
  private workflow = "";
  private models: ModelInfo[] = [];
  private workflows: WorkflowInfo[] = BUILT_IN_WORKFLOWS;
  private commands: SlashCommand[] | undefined;
  private readonly mentions = new Mentions();
  /** Messages sent while a turn runs (`queue.ts`). */
  readonly queue: MessageQueue;

  constructor(private readonly host: ChatHost) {
    this.queue = new MessageQueue({
      store: host.store,
      changed: () => host.changed(),
      log: (line) => host.log(line),
      advertised: () => host.advertised(),
      execute: (command, argument) => host.execute(command, argument),
      send: (session, text, context, chips) => this.followUp(session, text, context, chips),
    });
  }

  state(): ChatState {
    const current = this.current();
    const known = new Set(this.models.map((m) => m.id));
    const extra = [this.host.settings().model, ...this.host.store.list().map((s) => s.model ?? ""), this.model];
    const models = this.models.map((m) => ({ id: m.id, label: modelLabel(m) }));
    for (const id of extra) {
      if (id && !known.has(id)) {
        known.add(id);
        models.push({ id, label: id });
      }
    }
    return {
      current: current?.id,
      models,
      workflows: this.workflows.map((w) => ({ name: w.name, description: w.description ?? "" })),
      model: this.model,
      workflow: this.workflow,
      restore: (this.host.advertised() ?? []).includes(RESTORE_TURN),
    };
  }

  /** The conversation the input continues: the one chosen, else the newest of this window. */
  current(): SessionView | undefined {
    if (this.fresh) return undefined;
    return (this.currentId ? this.host.store.get(this.currentId) : undefined) ?? this.host.store.latest();
  }

  /** A session the person looks at becomes the conversation the input continues. */
  focus(sessionId: string | undefined): void {
    this.currentId = sessionId;
    this.fresh = false;
    this.host.changed();
  }

  /** "New session": the next message starts one. */
  newSession(): void {
    this.currentId = undefined;
    this.fresh = true;
    this.host.changed();
  }

  /** Models and workflows from the server (`cadenza.listModels`), when it offers them. */
  async loadModels(): Promise<void> {
    if (!(this.host.advertised() ?? []).includes(LIST_MODELS)) return;
    try {
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
      const result = (await this.host.execute(LIST_MODELS, root ? { rootUri: root } : {})) as Partial<ModelsResult>;
      if (Array.isArray(result?.models)) this.models = result.models.filter((m) => m && typeof m.id === "string");
      if (Array.isArray(result?.workflows) && result.workflows.length) {
        this.workflows = result.workflows.filter((w) => w && typeof w.name === "string");
      }
      this.host.changed();
    } catch (error) {
      this.host.log(`${LIST_MODELS} failed: ${errorText(error)}`);
    }
  }

  /** The model or workflow picked in the panel ("other": asked for in an input box). */
  async choose(what: "model" | "workflow", value: unknown): Promise<void> {
    let chosen = typeof value === "string" ? value : "";
    if (what === "model" && chosen === "other") {
      const typed = await vscode.window.showInputBox({
        title: "Cadenza: model for the next turn",
        prompt: "PROVIDER/MODEL, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder:7b",
        value: this.model || this.current()?.model || this.host.settings().model,
        ignoreFocusOut: true,
        validateInput: (v) => (/^[^/\s]+\/\S+$/.test(v.trim()) ? undefined : "Write it as PROVIDER/MODEL"),
      });
      if (typeof typed !== "string") {
        this.host.changed(); // puts the picker back
        return;
      }
      chosen = typed.trim();
    }
    if (what === "model") this.model = chosen;
    else this.workflow = chosen;
    this.host.log(`next turn: ${what} ${chosen || "(unchanged)"}`);
    this.host.changed();
  }

  /** The completion list of `@query` or `/query` for the webview. */
  async complete(trigger: "@" | "/", query: string, rootUri: string | undefined): Promise<Suggestion[] | { name: string; detail: string }[]> {
    if (trigger === "@") return this.mentions.suggest(query);
    if (this.commands === undefined && (this.host.advertised() ?? []).includes(LIST_COMMANDS)) {
      try {
        const result = (await this.host.execute(LIST_COMMANDS, rootUri ? { rootUri } : {})) as { commands?: SlashCommand[] };
        this.commands = Array.isArray(result?.commands) ? result.commands.filter((c) => c && typeof c.name === "string") : [];
      } catch (error) {
        this.host.log(`${LIST_COMMANDS} failed: ${errorText(error)}`);
      }
    }
    const q = query.toLowerCase();
    return (this.commands ?? [])
      .filter((c) => c.name.toLowerCase().startsWith(q))
      .map((c) => ({ name: c.name, detail: [c.description, c.hint].filter((s) => s).join(" — ") }));
  }

  /** Workspace `.cadenza/commands` may change: list the commands again next time. */
  forgetCommands(): void {
    this.commands = undefined;
  }

  /**
   * The input's message: the answer of a waiting session; else the next turn of the current
   * conversation (when the server has `cadenza.promptSession`); else a new session.
   */
  async prompt(rawText: unknown, rawMentions: unknown): Promise<void> {
    const text = typeof rawText === "string" ? rawText.trim() : "";
    const mentions = parseMentions(rawMentions);
    if (!text && mentions.length === 0) return;
    const current = this.current();
    if (current?.state === "waiting") {
      if (text) await this.host.reply(current.id, text);
      else void vscode.window.showInformationMessage("Cadenza waits for your answer: type it, then Enter.");
      return;
    }
    const canPrompt = (this.host.advertised() ?? []).includes(PROMPT_SESSION);
    if (current && current.state !== "ended" && !canPrompt) {
      void vscode.window.showInformationMessage(
        "Cadenza is still working on this conversation: wait for its turn to end, or Cancel it (or start a New Session).",
      );
      return;
    }
    const { context, missing } = this.mentions.context(mentions);
    if (missing.length) void vscode.window.showWarningMessage(`Cadenza: ${missing.join("; ")}: sent without it.`);
    const chips = mentions.map((m) => `@${m.label}`);
    const message = text || "Look at these.";
    if (current && current.state !== "ended") {
      // A turn runs: the message waits for it to end (or is steered into it).
      this.queue.add(current, message, context, chips);
      return;
    }
    if (current && canPrompt) {
      await this.followUp(current, message, context, chips);
      return;
    }
    const id = await this.host.start(message, {
      model: this.model || undefined,
      workflow: this.workflow || undefined,
      withEditorContext: mentions.length === 0,
      ...(context ? { context } : {}),
    });
    if (id) {
      const session = this.host.store.get(id);
      if (session && this.model) session.model = this.model;
      if (session) session.quiet = true;
      if (session && chips.length) session.taskChips = chips;
      this.focus(id);
    }
  }

  private async followUp(session: SessionView, text: string, context: PromptContext | undefined, chips: string[]): Promise<void> {
    const change: { model?: string; workflow?: string } = {};
    if (this.model && this.model !== session.model) change.model = this.model;
    if (this.workflow && this.workflow !== session.workflow) change.workflow = this.workflow;
    try {
      if (change.model || change.workflow) {
        await this.host.execute(CONFIGURE_SESSION, { sessionId: session.id, ...change });
        if (change.model) session.model = change.model;
        if (change.workflow) session.workflow = change.workflow;
        this.host.store.note(session.id, `Next turn: ${[change.model && `model ${change.model}`, change.workflow && `mode ${change.workflow}`].filter((s) => s).join(", ")}.`);
      }
      // Shown at once: the badge no longer says how the earlier turn ended.
      session.state = "starting";
      session.progress = "sending…";
      session.nextChips = chips;
      session.nextText = text;
      session.quiet = true;
      this.host.changed();
      await this.host.execute(PROMPT_SESSION, { sessionId: session.id, text, ...(context ? { context } : {}) });
    } catch (error) {
      if (session.state === "starting") session.state = "ended";
      session.progress = undefined;
      this.host.changed();
      this.host.log(`follow-up failed: ${errorText(error)}`);
      const message = (error as { message?: unknown })?.message;
      void vscode.window.showErrorMessage(`Cadenza could not send the message: ${typeof message === "string" ? message : errorText(error)}`);
    }
  }

  /**
   * "Restore" on one of the person's messages: the session as it was before it
   * (`cadenza.restoreTurn`: its files put back, the conversation cut), the message back in the
   * input, the conversation the current one.
   */
  async restore(sessionId: string, turn: unknown): Promise<void> {
    if (typeof turn !== "number" || !Number.isInteger(turn) || turn < 1) return;
    let result: RestoreTurnResult;
    try {
      result = (await this.host.execute(RESTORE_TURN, { sessionId, turn })) as RestoreTurnResult;
    } catch (error) {
      const message = (error as { message?: unknown })?.message;
      void vscode.window.showErrorMessage(`Cadenza could not restore: ${typeof message === "string" ? message : errorText(error)}`);
      return;
    }
    const files = result.files?.length ?? 0;
    const skipped = (result.skipped ?? []).map((s) => `${s.path} (${s.reason})`);
    const note =
      `Restored to before this message: ${files} file${files === 1 ? "" : "s"} put back.` +
      (skipped.length ? ` Left alone, changed since: ${skipped.join(", ")}.` : "");
    this.host.forgetReview(sessionId);
    this.host.store.restored(sessionId, turn, note);
    this.focus(sessionId);
    this.host.setInput(typeof result.text === "string" ? result.text : "");
    if (skipped.length) void vscode.window.showWarningMessage(`Cadenza: ${note}`);
  }

  /** The button of a `session_end` with a `fix` (Pull model), with a progress notification. */
  async runFix(sessionId: string, fix: EndFix | undefined): Promise<void> {
    if (!fix) return;
    const argument = (fix.arguments?.[0] ?? {}) as object;
    let result: unknown;
    try {
      result = await this.host.runWithProgress(`Cadenza: ${fix.title}`, fix.command, argument);
    } catch (error) {
      const message = (error as { message?: unknown })?.message;
      void vscode.window.showErrorMessage(`Cadenza: ${fix.title} failed: ${typeof message === "string" ? message : errorText(error)}`);
      return;
    }
    // `cadenza.pullModel` answers `{model}`: say which model is ready, and how to go on.
    const model = (result as { model?: unknown } | undefined)?.model;
    const done = `${typeof model === "string" ? `${model} is ready` : `${fix.title}: done`}. Send your message again to go on.`;
    // Done: the end's button goes (the note below says what happened).
    for (const entry of this.host.store.get(sessionId)?.entries ?? []) {
      if (entry.kind === "end" && entry.fix?.command === fix.command) entry.fix = undefined;
    }
    this.host.store.note(sessionId, done);
    this.host.changed();
    // Said at once: the model list below waits for the server, which may be slow to answer.
    void vscode.window.showInformationMessage(`Cadenza: ${done}`);
    this.models = [];
    await this.loadModels();
    this.host.changed();
  }
}
