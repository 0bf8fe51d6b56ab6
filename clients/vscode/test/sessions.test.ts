import { describe, expect, it } from "vitest";

import { CADENZA_CAPABILITIES, WAITING_REASONS } from "../src/protocol";
import {
  SessionStore,
  promptText,
  describeState,
  describeStopReason,
  isWaitingReason,
  lineStats,
  replyPrompt,
  sessionItems,
  undoSummary,
} from "../src/sessions";

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

  it("waits after needs_user_input, runs again on session_resume, and ignores unknown kinds", () => {
    const s = store();
    s.add("s", { task: "Rename greet" });
    expect(s.apply("s", { sessionUpdate: "some_later_kind", used: 5 })).toBeUndefined();
    const end = s.apply("s", {
      sessionUpdate: "session_end",
      stopReason: "needs_user_input",
      message: "I need a name.",
      steps: 3,
      missingInfo: "the new name",
      whyNoDefault: "equally plausible",
    });
    expect(end).toMatchObject({ stopReason: "needs_user_input" });
    expect(s.get("s")).toMatchObject({
      state: "waiting",
      stopReason: "needs_user_input",
      question: "the new name",
      whyNoDefault: "equally plausible",
    });
    expect(s.running()).toEqual([]);
    expect(s.waiting().map((x) => x.id)).toEqual(["s"]);
    expect(s.active().map((x) => x.id)).toEqual(["s"]);
    expect(describeState(s.get("s")!)).toBe("needs your input");
    expect(s.get("s")!.entries).toEqual([
      {
        kind: "end",
        stopReason: "needs_user_input",
        message: "I need a name.",
        steps: 3,
        missingInfo: "the new name",
        whyNoDefault: "equally plausible",
        waiting: true,
      },
    ]);
    // A server stop does not end a waiting session (its transcript lets a new server resume it).
    s.abandon("s", "the server stopped");
    expect(s.get("s")!.state).toBe("waiting");
    s.clearEnded();
    expect(s.get("s")).toBeDefined();

    expect(s.apply("s", { sessionUpdate: "session_resume", after: "needs_user_input", reply: "welcome" })).toBeUndefined();
    expect(s.get("s")).toMatchObject({ state: "running", stopReason: undefined, question: undefined });
    expect(s.running().map((x) => x.id)).toEqual(["s"]);
    s.apply("s", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Renamed." } });
    s.apply("s", { sessionUpdate: "session_end", stopReason: "end_turn", message: "Renamed.", steps: 4 });
    expect(s.get("s")).toMatchObject({ state: "ended", stopReason: "end_turn" });
    expect(s.get("s")!.entries.map((e) => e.kind)).toEqual(["end", "resume", "text", "end"]);
    expect(s.get("s")!.entries[1]).toEqual({ kind: "resume", after: "needs_user_input", reply: "welcome" });
  });

  it("waits after waiting_human with its page; a cancelled end is final", () => {
    const s = store();
    s.apply("w", {
      sessionUpdate: "session_end",
      stopReason: "waiting_human",
      message: "Log in on the page",
      steps: 2,
      browserSessionId: "b1",
      url: "https://example.com/login",
    });
    expect(s.get("w")).toMatchObject({ state: "waiting", question: "Log in on the page", url: "https://example.com/login" });
    expect(s.get("w")!.entries[0]).toMatchObject({ kind: "end", waiting: true, url: "https://example.com/login" });
    s.apply("w", { sessionUpdate: "session_end", stopReason: "cancelled", message: "", steps: 2 });
    expect(s.get("w")).toMatchObject({ state: "ended", stopReason: "cancelled", url: undefined, question: undefined });
    expect(s.waiting()).toEqual([]);
  });

  it("shows the person's text of a replay (user_message_chunk) apart from the agent's", () => {
    const s = store();
    s.apply("r", { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Rename " } });
    s.apply("r", { sessionUpdate: "user_message_chunk", content: { type: "text", text: "greet" } });
    s.apply("r", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Which name?" } });
    s.apply("r", { sessionUpdate: "user_message_chunk", content: { type: "text", text: "welcome" } });
    s.apply("r", { sessionUpdate: "user_message_chunk", content: { type: "image", data: "…" } });
    expect(s.get("r")!.entries).toEqual([
      { kind: "user", text: "Rename greet" },
      { kind: "text", text: "Which name?" },
      { kind: "user", text: "welcome" },
    ]);
  });

  it("resets a session before a replay and settles it on the state loadSession reports", () => {
    const s = store();
    s.add("a", { task: "t" });
    s.apply("a", {
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      content: [{ type: "diff", path: "/w/a.py", oldText: "a", newText: "b" }],
    });
    s.add("b", { task: "newer" });
    s.reset("a", { task: "the task", root: "/w" });
    expect(s.get("a")).toMatchObject({ task: "the task", root: "/w", entries: [], edited: [] });
    expect(s.list().map((x) => x.id)).toEqual(["b", "a"]);
    expect(s.diff("d1")).toBeUndefined();
    s.settle("a", "needs_user_input", "the new name");
    expect(s.get("a")).toMatchObject({ state: "waiting", stopReason: "needs_user_input", question: "the new name" });
    s.settle("a", "running");
    expect(s.get("a")!.state).toBe("running");
    s.settle("a", "interrupted");
    expect(s.get("a")).toMatchObject({ state: "ended", stopReason: "interrupted" });
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

  it("keeps one plan per turn, moved last as it changes", () => {
    const s = store();
    const plan = (status: string) => ({ sessionUpdate: "plan" as const, entries: [{ content: "a", status }] });
    s.apply("s", plan("in_progress"));
    s.apply("s", { sessionUpdate: "tool_call", toolCallId: "c1", title: "read", kind: "read" });
    s.apply("s", plan("completed"));
    const kinds = s.get("s")!.entries.map((e) => e.kind);
    expect(kinds).toEqual(["tool", "plan"]);
    s.apply("s", { sessionUpdate: "session_end", stopReason: "end_turn" });
    s.apply("s", plan("pending"));
    expect(s.get("s")!.entries.filter((e) => e.kind === "plan")).toHaveLength(2);
  });

  it("says which candidate reply was kept and why", () => {
    const s = store();
    s.apply("s", {
      sessionUpdate: "candidates",
      step: 4,
      tried: 3,
      kept: 2,
      passed: [1, 4, null],
      why: ["", "", "it was cut off"],
      of: 5,
    });
    s.apply("s", { sessionUpdate: "candidates", step: 5, tried: 2, kept: 1, passed: [null, null], of: null });
    expect(s.get("s")!.entries).toEqual([
      {
        kind: "note",
        level: "info",
        text:
          "Tried 3 replies against the tests on copies of the workspace; kept reply 2: 4 of 5 tests pass with it (each reply: 1; 4; not judged: it was cut off).",
      },
      { kind: "note", level: "info", text: "Tried 2 replies against the tests; none could be judged, kept reply 1." },
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

describe("waiting sessions and the session list", () => {
  it("declares Cadenza's three prompts and knows the waiting stop reasons", () => {
    expect(CADENZA_CAPABILITIES).toEqual({
      askUser: true,
      requestPermission: true,
      waitingHuman: true,
      codeIntelligence: { diagnostics: true, references: true, definition: true, rename: true },
    });
    expect([...WAITING_REASONS].sort()).toEqual(["needs_user_input", "waiting_human"]);
    expect(isWaitingReason("needs_user_input")).toBe(true);
    expect(isWaitingReason("cancelled")).toBe(false);
    expect(isWaitingReason(undefined)).toBe(false);
  });

  it("words the reply prompt: a question needs an answer, the browser may be just done", () => {
    expect(replyPrompt({ stopReason: "needs_user_input", question: "the new name", whyNoDefault: "two fit" })).toEqual({
      prompt: "the new name (two fit)",
      placeHolder: "Your answer (Escape: later)",
      required: true,
    });
    expect(replyPrompt({ stopReason: "waiting_human", question: "Log in" })).toMatchObject({ prompt: "Log in", required: false });
    expect(replyPrompt(undefined)).toMatchObject({ prompt: "What should the agent know?", required: true });
  });

  it("turns cadenza.listSessions' {sessions} into quick pick items", () => {
    const items = sessionItems({
      sessions: [
        {
          sessionId: "4f6c0d8e2b5a4e0f9d3c1b2a7e6f5d4c",
          task: "Rename greet\nwith context",
          state: "needs_user_input",
          started: "2026-11-30T05:43:35.215000+00:00",
          workflow: "default",
          model: "openai/gpt-4.1",
          root: "/home/ada/project",
          question: "the new name of greet",
        },
        { sessionId: "0b1c", task: "Add a docstring", state: "end_turn", started: "", workflow: "default", model: "m", root: "" },
        { task: "no id" },
      ],
    });
    expect(items.map(({ label, description, detail }) => ({ label, description, detail }))).toEqual([
      {
        label: "Rename greet",
        description: "needs your input: the new name of greet",
        detail: "4f6c0d8e · 2026-11-30 05:43:35 UTC · openai/gpt-4.1 · /home/ada/project",
      },
      { label: "Add a docstring", description: "done", detail: "0b1c · m" },
    ]);
    expect(items[0].info).toMatchObject({ sessionId: "4f6c0d8e2b5a4e0f9d3c1b2a7e6f5d4c", state: "needs_user_input" });
    expect(items[1].info.question).toBeUndefined();
    expect(sessionItems(null)).toEqual([]);
    expect(sessionItems({ sessions: "x" })).toEqual([]);
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

describe("describeStopReason", () => {
  it("words every documented stop reason and passes unknown ones through", () => {
    for (const reason of ["end_turn", "needs_user_input", "waiting_human", "failed", "aborted", "cancelled", "max_steps", "error"]) {
      expect(describeStopReason(reason)).not.toBe(reason);
    }
    expect(describeStopReason("later_reason")).toBe("later_reason");
  });
});

describe("usage and replays", () => {
  it("shows each turn's token usage at its end, and live while it runs", () => {
    const s = store();
    s.add("u", { task: "t", contextSize: 8192 });
    s.apply("u", { sessionUpdate: "model_reply", step: 1, toolCalls: 1, finishReason: "tool_calls", promptTokens: 1000, completionTokens: 20 });
    expect(s.get("u")!.usage).toBe("context 1,000 / 8k tokens (12%) · 20 tokens out · 1 request");
    s.apply("u", { sessionUpdate: "model_reply", step: 2, toolCalls: 0, finishReason: "stop", promptTokens: 1843, completionTokens: 41 });
    s.apply("u", { sessionUpdate: "session_end", stopReason: "needs_user_input", message: "which?", steps: 2 });
    const first = s.get("u")!.entries.at(-1)!;
    expect(first).toMatchObject({ kind: "end", usage: "context 1,843 / 8k tokens (22%) · 61 tokens out · 2 requests" });
    // The next turn counts anew.
    s.apply("u", { sessionUpdate: "session_resume", after: "needs_user_input", reply: "this" });
    s.apply("u", { sessionUpdate: "model_reply", step: 3, toolCalls: 0, finishReason: "stop" });
    s.apply("u", { sessionUpdate: "session_end", stopReason: "end_turn", message: "ok", steps: 3 });
    expect(s.get("u")!.entries.at(-1)).toMatchObject({ kind: "end", usage: "1 request · no token counts reported" });
  });

  it("shows each turn's cost beside its usage when the server reports one", () => {
    const s = store();
    s.add("c", { task: "t" });
    const cost = { amount: 0.0125, currency: "USD" };
    s.apply("c", { sessionUpdate: "model_reply", step: 1, toolCalls: 1, finishReason: "tool_calls", promptTokens: 1000, completionTokens: 20, cost });
    expect(s.get("c")!.usage).toBe("context 1,000 tokens · 20 tokens out · 1 request · $0.0125");
    s.apply("c", { sessionUpdate: "model_reply", step: 2, toolCalls: 0, finishReason: "stop", promptTokens: 1100, completionTokens: 5, cost: { amount: 0.0075, currency: "USD" } });
    s.apply("c", { sessionUpdate: "session_end", stopReason: "end_turn", message: "ok", steps: 2 });
    expect(s.get("c")!.entries.at(-1)).toMatchObject({ kind: "end", usage: "context 1,100 tokens · 25 tokens out · 2 requests · $0.0200" });
    // A turn whose provider reported no cost shows none (the last turn's cost does not carry over).
    s.apply("c", { sessionUpdate: "session_resume", after: "end_turn", reply: "more" });
    s.apply("c", { sessionUpdate: "model_reply", step: 3, toolCalls: 0, finishReason: "stop", promptTokens: 1200, completionTokens: 3 });
    s.apply("c", { sessionUpdate: "session_end", stopReason: "end_turn", message: "ok", steps: 3 });
    expect(s.get("c")!.entries.at(-1)).toMatchObject({ kind: "end", usage: "context 1,200 tokens · 3 tokens out · 1 request" });
  });

  it("a replay shows the person's reply, not the server's wording around it", () => {
    const s = store();
    s.reset("r", { task: "Show the currency" });
    s.apply("r", { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Show the currency" } });
    s.apply("r", { sessionUpdate: "session_end", stopReason: "needs_user_input", message: "", missingInfo: "which currency" });
    s.apply("r", { sessionUpdate: "session_resume", after: "needs_user_input", reply: "CHF" });
    s.apply("r", {
      sessionUpdate: "user_message_chunk",
      content: { type: "text", text: "The person answered your question (which currency): CHF" },
    });
    s.apply("r", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } });
    const entries = s.get("r")!.entries;
    expect(entries.filter((e) => e.kind === "user")).toEqual([{ kind: "user", text: "Show the currency" }]);
    expect(entries.find((e) => e.kind === "resume")).toEqual({ kind: "resume", after: "needs_user_input", reply: "CHF" });
    expect(JSON.stringify(entries)).not.toContain("The person answered");
  });
});

describe("provider errors", () => {
  it("ends with one readable sentence; the server's text stays as the detail", () => {
    const s = store();
    s.add("e", { task: "t" });
    const raw = 'openai/test chat completion: HTTP 401: {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}';
    s.apply("e", { sessionUpdate: "session_end", stopReason: "error", message: raw, steps: 1 });
    const session = s.get("e")!;
    expect(session.message).toMatch(/^The openai provider refused the API key \(HTTP 401\)/);
    expect(session.entries.at(-1)).toMatchObject({ kind: "end", message: session.message, detail: raw });
  });
});

describe("follow-ups", () => {
  it("shows a prompt after a final end as the person's message, without the editor context", () => {
    const s = new SessionStore(() => 0);
    s.apply("f", { sessionUpdate: "session_end", stopReason: "error", message: "boom" });
    s.get("f")!.nextChips = ["@inventory.py"];
    s.get("f")!.nextText = "What does @inventory.py do?";
    s.apply("f", { sessionUpdate: "session_resume", after: "error", reply: "What does @inventory.py do?\n\nContext from the editor:\n\nFile inventory.py" });
    s.apply("f", { sessionUpdate: "user_message_chunk", content: { type: "text", text: "What does @inventory.py do?\n\nContext…" } });
    expect(s.get("f")!.state).toBe("running");
    expect(s.get("f")!.stopReason).toBeUndefined();
    expect(s.get("f")!.entries.slice(1)).toEqual([{ kind: "prompt", text: "What does @inventory.py do?", chips: ["@inventory.py"] }]);
  });

  it("cuts the context of a replayed follow-up at the protocol's marker", () => {
    expect(promptText("Now a test\n\nContext from the editor:\n\nFile a.py", undefined)).toBe("Now a test");
    expect(promptText("Plain", undefined)).toBe("Plain");
  });

  it("keeps a session_end's fix (Pull model) for the panel's button", () => {
    const s = new SessionStore(() => 0);
    const fix = { title: "Pull model", command: "cadenza.pullModel", arguments: [{ model: "local/smollm2-135m" }] };
    s.apply("p", { sessionUpdate: "session_end", stopReason: "error", message: "model not pulled", fix });
    const end = s.get("p")!.entries.at(-1);
    expect(end?.kind === "end" && end.fix).toEqual(fix);
  });
});

describe("session_resume's kind", () => {
  it("words a prompt as the person's message and an answer as an answer, whatever the stop reason", () => {
    const s = new SessionStore(() => 0);
    s.apply("k", { sessionUpdate: "session_end", stopReason: "needs_user_input", message: "which?" });
    s.apply("k", { sessionUpdate: "session_resume", after: "needs_user_input", reply: "CHF", kind: "answer" });
    s.apply("k", { sessionUpdate: "session_end", stopReason: "end_turn", message: "done" });
    s.apply("k", { sessionUpdate: "session_resume", after: "end_turn", reply: "and now in EUR", kind: "prompt" });
    const kinds = s.get("k")!.entries.filter((e) => e.kind === "resume" || e.kind === "prompt");
    expect(kinds).toEqual([
      { kind: "resume", after: "needs_user_input", reply: "CHF" },
      { kind: "prompt", text: "and now in EUR" },
    ]);
  });
});
