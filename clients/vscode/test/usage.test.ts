import { describe, expect, it } from "vitest";

import { addModelReply, addUsageUpdate, emptyUsage, formatTokens, formatUsage } from "../src/usage";

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
});
