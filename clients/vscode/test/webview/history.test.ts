import { describe, expect, it } from "vitest";

import { PromptHistory } from "../../src/webview/history";

describe("PromptHistory", () => {
  it("recalls older and newer prompts and gives the draft back", () => {
    const h = new PromptHistory();
    expect(h.previous("x")).toBeUndefined();
    h.push("first");
    h.push("second");
    h.push("second");
    h.push("  ");
    expect(h.list()).toEqual(["first", "second"]);
    expect(h.previous("typing")).toBe("second");
    expect(h.previous("second")).toBe("first");
    expect(h.previous("first")).toBeUndefined();
    expect(h.next()).toBe("second");
    expect(h.next()).toBe("typing");
    expect(h.next()).toBeUndefined();
  });

  it("keeps at most `limit` prompts", () => {
    const h = new PromptHistory(2, ["a", "b", "c"]);
    expect(h.list()).toEqual(["b", "c"]);
  });
});
