import { describe, expect, it } from "vitest";

import { STEER_SESSION } from "../src/protocol";
import { MessageQueue } from "../src/queue";
import { SessionStore } from "../src/sessions";

function setup(steer: (argument: object) => Promise<unknown> = async () => ({ steered: true })) {
  const store = new SessionStore(() => 1);
  const sent: string[] = [];
  const calls: [string, object][] = [];
  const queue = new MessageQueue({
    store,
    changed: () => undefined,
    log: () => undefined,
    advertised: () => [STEER_SESSION],
    execute: (command, argument) => {
      calls.push([command, argument]);
      return steer(argument);
    },
    send: async (_session, text) => {
      sent.push(text);
    },
  });
  const session = store.add("s", { task: "t", state: "running" });
  return { store, queue, session, sent, calls };
}

describe("MessageQueue", () => {
  it("sends the queued messages one per ended turn, in order", async () => {
    const { store, queue, session, sent } = setup();
    queue.add(session, "first", undefined, []);
    queue.add(session, "second", undefined, []);
    expect(session.queued?.map((m) => m.text)).toEqual(["first", "second"]);
    await queue.ended("s"); // still running: nothing goes
    expect(sent).toEqual([]);
    store.apply("s", { sessionUpdate: "session_end", stopReason: "end_turn" });
    await queue.ended("s");
    expect(sent).toEqual(["first"]);
    expect(session.queued?.map((m) => m.text)).toEqual(["second"]);
  });

  it("removes a message with its x", () => {
    const { queue, session } = setup();
    queue.add(session, "drop me", undefined, []);
    const id = session.queued![0].id;
    expect(queue.remove("s", id)?.text).toBe("drop me");
    expect(session.queued).toEqual([]);
  });

  it("steers a message into the running turn", async () => {
    const { queue, session, calls } = setup();
    queue.add(session, "use tabs", undefined, []);
    expect(session.queued![0].steerable).toBe(true);
    await queue.steer("s", session.queued![0].id);
    expect(calls).toEqual([[STEER_SESSION, { sessionId: "s", text: "use tabs" }]]);
    expect(session.queued).toEqual([]);
    expect(session.entries.at(-1)).toEqual({ kind: "prompt", text: "use tabs", steered: true });
  });

  it("keeps a refused steer queued", async () => {
    const { queue, session } = setup(async () => {
      throw Object.assign(new Error("no turn running"), { code: -32803 });
    });
    queue.add(session, "late", undefined, ["@a.py"]);
    expect(session.queued![0].steerable).toBe(false); // mentions: sent as a prompt only
    await queue.steer("s", session.queued![0].id);
    expect(session.queued?.map((m) => m.text)).toEqual(["late"]);
  });
});
