import { describe, expect, it } from "vitest";

import type { Entry } from "../src/sessionModel";
import { SessionStore } from "../src/sessions";
import { messageTurns, turnStart } from "../src/turns";

const live: Entry[] = [
  { kind: "text", text: "done a" },
  { kind: "end", stopReason: "end_turn", message: "" },
  { kind: "prompt", text: "now b" },
  { kind: "text", text: "what name?" },
  { kind: "end", stopReason: "needs_user_input", message: "", waiting: true },
  { kind: "resume", after: "needs_user_input", reply: "bee" },
  { kind: "end", stopReason: "end_turn", message: "" },
];

describe("the person's messages, numbered as cadenza.restoreTurn counts them", () => {
  it("counts the task (in the header), each follow-up and each answer", () => {
    expect([...messageTurns(live)]).toEqual([
      [2, 2],
      [5, 3],
    ]);
    expect(turnStart(live, 1)).toBe(0);
    expect(turnStart(live, 3)).toBe(5);
  });

  it("does not count a message steered into a running turn", () => {
    const steered: Entry[] = [{ kind: "prompt", text: "use tabs", steered: true }, ...live];
    expect([...messageTurns(steered)]).toEqual([
      [3, 2],
      [6, 3],
    ]);
  });

  it("takes a replayed task as message 1", () => {
    const replayed: Entry[] = [
      { kind: "movement", movement: "work" },
      { kind: "user", text: "make a" },
      { kind: "user", text: "a steer in turn 1" },
      ...live,
    ];
    expect([...messageTurns(replayed)]).toEqual([
      [1, 1],
      [5, 2],
      [8, 3],
    ]);
    expect(turnStart(replayed, 2)).toBe(5);
  });

  it("cuts the conversation before a restored message, with a note", () => {
    const store = new SessionStore(() => 1);
    store.note("s1", "first");
    const session = store.get("s1");
    if (!session) throw new Error("no session");
    session.entries.push(...live);
    store.restored("s1", 2, "Restored to before this message: 1 file put back.");
    expect(session.entries.map((e) => e.kind)).toEqual(["note", "text", "end", "note"]);
    expect(session.state).toBe("ended");
  });
});
