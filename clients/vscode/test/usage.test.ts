import { describe, expect, it } from "vitest";

import { SessionStore } from "../src/sessions";
import {
  addModelReply,
  addUsageUpdate,
  contextMeter,
  contextUse,
  emptyUsage,
  formatCost,
  formatTokens,
  formatUsage,
  formatWindow,
} from "../src/usage";

describe("usage", () => {
  it("formats token counts", () => {
    expect(formatTokens(0)).toBe("0");
    expect(formatTokens(1843)).toBe("1,843");
    expect(formatTokens(12345)).toBe("12.3k");
    expect(formatTokens(128000)).toBe("128k");
    expect(formatTokens(1234567)).toBe("1.23M");
  });

  it("adds model replies: the latest prompt is the context, completions add up", () => {
    const u = emptyUsage();
    addModelReply(u, { promptTokens: 1200, completionTokens: 30 });
    addModelReply(u, { promptTokens: 1843, completionTokens: 41 });
    expect(u).toEqual({ requests: 2, promptTokens: 1843, completionTokens: 71 });
    expect(formatUsage(u)).toBe("context 1,843 tokens · 71 tokens out · 2 requests");
    expect(formatUsage(u, 8192)).toBe("context 1,843 / 8k tokens (22%) · 71 tokens out · 2 requests");
  });

  it("says when the provider reported no counts, and nothing before a request", () => {
    expect(formatUsage(undefined)).toBe("");
    expect(formatUsage(emptyUsage())).toBe("");
    const u = emptyUsage();
    addModelReply(u, {});
    expect(formatUsage(u)).toBe("1 request · no token counts reported");
    addModelReply(u, { promptTokens: "12", completionTokens: -1 });
    expect(u.promptTokens).toBeUndefined();
  });

  it("prefers usage_update's context and size", () => {
    const u = emptyUsage();
    addModelReply(u, { promptTokens: 900, completionTokens: 10 });
    addUsageUpdate(u, { used: 1000, size: 32768 });
    expect(formatUsage(u, 8192)).toBe("context 1,000 / 32k tokens (3%) · 10 tokens out · 1 request");
  });

  it("shows the turn's cost beside its usage when reported, nothing when absent", () => {
    const u = emptyUsage();
    addModelReply(u, { promptTokens: 1200, completionTokens: 30, cost: { amount: 0.0125, currency: "USD" } });
    addModelReply(u, { promptTokens: 1843, completionTokens: 41, cost: { amount: 0.0075, currency: "USD" } });
    expect(u.cost).toEqual({ USD: 0.02 });
    expect(formatUsage(u)).toBe("context 1,843 tokens · 71 tokens out · 2 requests · $0.0200");

    const none = emptyUsage();
    addModelReply(none, { promptTokens: 10, completionTokens: 2 });
    addModelReply(none, { promptTokens: 12, completionTokens: 2, cost: null });
    addModelReply(none, { promptTokens: 14, completionTokens: 2, cost: { amount: "0.1", currency: "USD" } });
    addModelReply(none, { promptTokens: 16, completionTokens: 2, cost: { amount: -1, currency: "USD" } });
    expect(none.cost).toBeUndefined();
    expect(formatUsage(none)).not.toMatch(/\$/);
  });

  it("formats costs by currency, with a fallback for unknown codes", () => {
    expect(formatCost(0.02, "USD")).toBe("$0.0200");
    expect(formatCost(1.5, "USD")).toBe("$1.50");
    expect(formatCost(0.5, "EUR")).toBe("€0.5000");
    expect(formatCost(0.02, "NOT A CODE")).toBe("0.0200 NOT A CODE");
    const u = emptyUsage();
    addModelReply(u, { cost: { amount: 0.01, currency: "usd" } });
    addModelReply(u, { cost: { amount: 0.5, currency: "EUR" } });
    expect(formatUsage(u)).toBe("2 requests · no token counts reported · $0.0100 · €0.5000");
  });

  it("takes the context window from model_reply's contextSize, over the setting", () => {
    const u = emptyUsage();
    addModelReply(u, { promptTokens: 3932, completionTokens: 10, contextSize: 32768 });
    expect(formatUsage(u, 8192)).toBe("context 3,932 / 32k tokens (12%) · 10 tokens out · 1 request");
    addModelReply(u, { promptTokens: 4000, contextSize: 0 });
    expect(u.contextSize).toBe(32768);
    expect(formatUsage({ requests: 1, promptTokens: 10, contextSize: 8192 })).toBe("context 10 / 8k tokens (<1%) · 1 request");
  });
});

describe("the context meter", () => {
  it("writes a window in short", () => {
    expect(formatWindow(8192)).toBe("8k");
    expect(formatWindow(32768)).toBe("32k");
    expect(formatWindow(131072)).toBe("128k");
    expect(formatWindow(200000)).toBe("200k");
    expect(formatWindow(1048576)).toBe("1M");
    expect(formatWindow(2_000_000)).toBe("2M");
    expect(formatWindow(12345)).toBe("12k");
    expect(formatWindow(1500)).toBe("1.5k");
    expect(formatWindow(512)).toBe("512");
  });

  it("is the latest prompt against the window: share, tooltip, level", () => {
    expect(contextMeter(undefined)).toBeUndefined();
    expect(contextMeter({ used: 3932, size: 32768 })).toEqual({
      text: "12% of 32k",
      title:
        "Context in use: 3,932 of 32,768 tokens (12%), the prompt of the latest model request in this conversation. " +
        "Near 70% Cadenza summarizes older turns.",
      percent: 12,
      level: "normal",
    });
    expect(contextMeter({ used: 10, size: 8192 })?.text).toBe("<1% of 8k");
    expect(contextMeter({ used: 6000, size: 8192 })).toMatchObject({ text: "73% of 8k", level: "high" });
    expect(contextMeter({ used: 9000, size: 8192 })).toMatchObject({ text: "100% of 8k", percent: 100, level: "full" });
  });

  it("shows tokens only when the window is not known", () => {
    expect(contextMeter({ used: 1843 })).toEqual({
      text: "1,843 tokens",
      title: "Context in use: 1,843 tokens, the prompt of the latest model request (the model's context size is not known).",
      level: "normal",
    });
    expect(contextUse(emptyUsage())).toBeUndefined();
    expect(contextUse({ requests: 1, promptTokens: 5 }, 4096)).toEqual({ used: 5, size: 4096 });
  });

  it("follows every request of a conversation, across its turns", () => {
    const s = new SessionStore(() => 0);
    s.add("m", { task: "t" });
    expect(s.get("m")!.context).toBeUndefined();
    s.apply("m", { sessionUpdate: "model_reply", step: 1, toolCalls: 1, finishReason: "tool_calls", promptTokens: 1000, contextSize: 32768 });
    expect(s.get("m")!.context).toEqual({ used: 1000, size: 32768 });
    s.apply("m", { sessionUpdate: "model_reply", step: 2, toolCalls: 0, finishReason: "stop", promptTokens: 3932, contextSize: 32768 });
    expect(s.get("m")!.context).toEqual({ used: 3932, size: 32768 });
    s.apply("m", { sessionUpdate: "session_end", stopReason: "end_turn", message: "ok", steps: 2 });
    // The turn is over; the meter still shows what the conversation holds.
    expect(s.get("m")!.context).toEqual({ used: 3932, size: 32768 });
    s.apply("m", { sessionUpdate: "session_resume", after: "end_turn", reply: "more", kind: "prompt" });
    s.apply("m", { sessionUpdate: "model_reply", step: 3, toolCalls: 0, finishReason: "stop" }); // no counts
    expect(s.get("m")!.context).toEqual({ used: 3932, size: 32768 });
    s.apply("m", { sessionUpdate: "usage_update", used: 5000, size: 32768 });
    expect(s.get("m")!.context).toEqual({ used: 5000, size: 32768 });
  });
});
