/**
 * Messages the person sends while a turn runs: shown queued under the conversation (each can be
 * removed), sent as the next turn (`cadenza.promptSession`) when the running one ends, one per
 * turn, in order; or steered into the running turn now (`cadenza.steerSession`: the agent reads
 * it at its next step). A steer the server refuses (the turn just ended) stays queued.
 */

import { errorText } from "./errors";
import { STEER_SESSION, type PromptContext } from "./protocol";
import type { QueuedMessage, SessionView } from "./sessionModel";
import type { SessionStore } from "./sessions";

export interface QueueHost {
  store: SessionStore;
  changed(): void;
  log(line: string): void;
  advertised(): readonly string[] | undefined;
  execute(command: string, argument: object): Promise<unknown>;
  /** Send a message as the session's next turn. */
  send(session: SessionView, text: string, context: PromptContext | undefined, chips: string[]): Promise<void>;
}

export class MessageQueue {
  private nextId = 1;

  constructor(private readonly host: QueueHost) {}

  /** Queue a message for `session`'s next turn. */
  add(session: SessionView, text: string, context: PromptContext | undefined, chips: string[]): void {
    const message: QueuedMessage = { id: this.nextId++, text };
    if (context) message.context = context;
    if (chips.length) message.chips = chips;
    message.steerable = !chips.length && (this.host.advertised() ?? []).includes(STEER_SESSION);
    session.queued = [...(session.queued ?? []), message];
    this.host.changed();
  }

  /** The x of a queued message: it is not sent. */
  remove(sessionId: string, id: number): QueuedMessage | undefined {
    const session = this.host.store.get(sessionId);
    const found = session?.queued?.find((m) => m.id === id);
    if (!session || !found) return undefined;
    session.queued = session.queued?.filter((m) => m !== found);
    this.host.changed();
    return found;
  }

  /** Steer: send a queued message into the running turn; refused, it stays queued. */
  async steer(sessionId: string, id: number): Promise<void> {
    const session = this.host.store.get(sessionId);
    const found = session?.queued?.find((m) => m.id === id);
    if (!session || !found) return;
    try {
      await this.host.execute(STEER_SESSION, { sessionId, text: found.text });
    } catch (error) {
      this.host.log(`${STEER_SESSION} failed: ${errorText(error)}`);
      this.host.store.note(sessionId, "The turn ended before the message could steer it: it is sent as the next turn.");
      this.host.changed();
      return;
    }
    this.remove(sessionId, id);
    session.entries.push({ kind: "prompt", text: found.text, steered: true });
    this.host.changed();
  }

  /** After a `session_end`: a session whose turn is over sends its first queued message. */
  async ended(sessionId: string): Promise<void> {
    const session = this.host.store.get(sessionId);
    const next = session?.queued?.[0];
    if (!session || !next || session.state !== "ended") return;
    this.remove(sessionId, next.id);
    await this.host.send(session, next.text, next.context, next.chips ?? []);
  }
}
