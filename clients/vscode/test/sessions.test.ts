import { describe, expect, it } from "vitest";

import { SessionStore, describeStopReason, endNotice, lineStats, undoSummary } from "../src/sessions";

function store() {
  let t = 1000;
  return new SessionStore(() => t++);
}

describe("SessionStore.apply", () => {
  it("renders a whole session in order", () => {
    const s = store();
    s.add("s1", { task: "Rename greet" });
    s.apply("s1", { sessionUpdate: "movement", workflow: "default", movement: "work", index: 1, reason: "" });
    s.apply("s1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Let me " } });
    s.apply("s1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "look." } });
    s.apply("s1", {
      sessionUpdate: "tool_call",
      toolCallId: "c1",
      title: "editing app.py",
      kind: "edit",
      status: "in_progress",
      rawInput: { path: "app.py" },
    });
    s.apply("s1", {
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      content: [{ type: "diff", path: "/w/app.py", oldText: "def greet():\n", newText: "def welcome():\n" }],
    });
    s.apply("s1", {
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: "edited app.py: 1 replacement(s)" } }],
    });
    s.apply("s1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } });
    const end = s.apply("s1", { sessionUpdate: "session_end", stopReason: "end_turn", message: "Renamed.", steps: 2 });

    expect(end).toMatchObject({ stopReason: "end_turn" });
    const session = s.get("s1")!;
    expect(session.state).toBe("ended");
    expect(session.stopReason).toBe("end_turn");
    expect(session.steps).toBe(2);
    expect(session.edited).toEqual(["/w/app.py"]);
    expect(session.entries.map((e) => e.kind)).toEqual(["movement", "text", "tool", "text", "end"]);
    expect(session.entries[1]).toEqual({ kind: "text", text: "Let me look." });
    const tool = session.entries[2];
    expect(tool).toMatchObject({
      kind: "tool",
      title: "editing app.py",
      toolKind: "edit",
      status: "completed",
      input: '{"path":"app.py"}',
      output: "edited app.py: 1 replacement(s)",
      diffs: [{ id: "d1", path: "/w/app.py", created: false, added: 1, removed: 1 }],
    });
    expect(s.diff("d1")).toMatchObject({ sessionId: "s1", oldText: "def greet():\n", newText: "def welcome():\n" });
  });

  it("creates a tool call from an update whose tool_call was lost", () => {
    const s = store();
    s.apply("s2", { sessionUpdate: "tool_call_update", toolCallId: "c9", status: "failed", kind: "read" });
    expect(s.get("s2")!.entries).toEqual([
      { kind: "tool", toolCallId: "c9", title: "read", toolKind: "read", status: "failed", diffs: [] },
    ]);
  });

  it("records a created file's diff", () => {
    const s = store();
    s.apply("s", {
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      content: [{ type: "diff", path: "/w/new.py", oldText: null, newText: "a\nb\n" }],
    });
    const tool = s.get("s")!.entries[0];
    expect(tool.kind === "tool" && tool.diffs[0]).toMatchObject({ created: true, added: 2, removed: 0 });
  });

  it("keeps needs_user_input's fields and ignores unknown kinds", () => {
    const s = store();
    expect(s.apply("s", { sessionUpdate: "usage_update", used: 5 })).toBeUndefined();
    s.apply("s", {
      sessionUpdate: "session_end",
      stopReason: "needs_user_input",
      message: "I need a name.",
      steps: 3,
      missingInfo: "the new name",
      whyNoDefault: "equally plausible",
    });
    expect(s.get("s")!.entries).toEqual([
      {
        kind: "end",
        stopReason: "needs_user_input",
        message: "I need a name.",
        steps: 3,
        missingInfo: "the new name",
        whyNoDefault: "equally plausible",
      },
    ]);
  });

  it("shows movements, compaction and plans", () => {
    const s = store();
    s.apply("s", { sessionUpdate: "movement", workflow: "pir", movement: "implement", index: 2, reason: "rename both" });
    s.apply("s", { sessionUpdate: "compaction", tokensBefore: 5120, tokensAfter: 1830, messagesSummarized: 14 });
    s.apply("s", { sessionUpdate: "plan", entries: [{ content: "a", status: "pending" }] });
    s.apply("s", { sessionUpdate: "plan", entries: [{ content: "a", status: "completed" }] });
    expect(s.get("s")!.entries).toEqual([
      { kind: "movement", movement: "implement", index: 2, reason: "rename both", workflow: "pir" },
      { kind: "compaction", tokensBefore: 5120, tokensAfter: 1830, messagesSummarized: 14 },
      { kind: "plan", items: [{ content: "a", status: "completed" }] },
    ]);
  });

  it("clips long tool output", () => {
    const s = store();
    s.apply("s", {
      sessionUpdate: "tool_call_update",
      toolCallId: "c",
      content: [{ type: "content", content: { type: "text", text: "x".repeat(5000) } }],
    });
    const tool = s.get("s")!.entries[0];
    expect(tool.kind === "tool" && tool.output).toMatch(/… \(1000 more characters\)$/);
  });
});

describe("SessionStore bookkeeping", () => {
  it("lists running sessions, finds the latest, abandons on server exit, clears ended ones", () => {
    const s = store();
    s.add("a", { task: "first" });
    s.add("b", { task: "second" });
    s.apply("a", { sessionUpdate: "session_end", stopReason: "cancelled", message: "" });
    expect(s.running().map((x) => x.id)).toEqual(["b"]);
    expect(s.latest()!.id).toBe("b");
    expect(s.latest((x) => x.state === "ended")!.id).toBe("a");
    s.progress("b", "work · step 1/25");
    expect(s.get("b")!.progress).toBe("work · step 1/25");
    s.abandon("b", "the server stopped");
    expect(s.get("b")).toMatchObject({ state: "ended", stopReason: "server_exit" });
    s.abandon("b", "again"); // no second end entry
    expect(s.get("b")!.entries.filter((e) => e.kind === "end")).toHaveLength(1);
    s.add("c", { task: "third" });
    s.clearEnded();
    expect(s.list().map((x) => x.id)).toEqual(["c"]);
  });

  it("does not overwrite fields with undefined", () => {
    const s = store();
    s.add("a", { task: "t", root: "/w" });
    s.add("a", { root: undefined });
    expect(s.get("a")!.root).toBe("/w");
  });
});

describe("lineStats", () => {
  it("counts the lines outside the common prefix and suffix", () => {
    expect(lineStats("a\nb\nc\n", "a\nB\nc\n")).toEqual({ added: 1, removed: 1 });
    expect(lineStats("a\nc\n", "a\nb\nc\n")).toEqual({ added: 1, removed: 0 });
    expect(lineStats("a\nb\nc\n", "a\n")).toEqual({ added: 0, removed: 2 });
    expect(lineStats(null, "x\ny")).toEqual({ added: 2, removed: 0 });
    expect(lineStats("same", "same")).toEqual({ added: 0, removed: 0 });
  });
});

describe("undoSummary", () => {
  it("words what undo put back", () => {
    expect(
      undoSummary({
        sessionId: "s",
        files: [
          { path: "a.py", action: "restored" },
          { path: "new.py", action: "removed" },
          { path: "old.py", action: "moved_back", oldPath: "renamed.py" },
        ],
        unchanged: ["b.py"],
      }),
    ).toBe("undid the session: restored a.py, removed new.py, renamed.py moved back to old.py (already as before: b.py).");
    expect(undoSummary({ files: [], unchanged: [] })).toBe("the session had nothing left to undo.");
    expect(undoSummary(null)).toBe("the session had nothing left to undo.");
  });
});

describe("endNotice", () => {
  it("words the end of a session", () => {
    expect(endNotice("end_turn", "Renamed.")).toBe("Cadenza finished: Renamed.");
    expect(endNotice("end_turn", "")).toBe("Cadenza finished the task.");
    expect(endNotice("cancelled", "")).toBe("Cadenza: the task was cancelled.");
    expect(endNotice("max_steps", "stopped after 25 steps")).toBe("Cadenza stopped at the step limit: stopped after 25 steps");
    expect(endNotice("error", undefined)).toBe("Cadenza failed with an error.");
    expect(endNotice("end_turn", "x".repeat(300))).toHaveLength("Cadenza finished: ".length + 200);
  });
});

describe("describeStopReason", () => {
  it("words every documented stop reason and passes unknown ones through", () => {
    for (const reason of ["end_turn", "needs_user_input", "waiting_human", "failed", "aborted", "cancelled", "max_steps", "error"]) {
      expect(describeStopReason(reason)).not.toBe(reason);
    }
    expect(describeStopReason("later_reason")).toBe("later_reason");
  });
});
