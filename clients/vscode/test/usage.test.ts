import { describe, expect, it } from "vitest";

import { addModelReply, addUsageUpdate, emptyUsage, formatCost, formatTokens, formatUsage } from "../src/usage";

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
    expect(formatUsage(u, 8192)).toBe("context 1,843 / 8,192 tokens (22%) · 71 tokens out · 2 requests");
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
    expect(formatUsage(u, 8192)).toBe("context 1,000 / 32.8k tokens (3%) · 10 tokens out · 1 request");
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
});
