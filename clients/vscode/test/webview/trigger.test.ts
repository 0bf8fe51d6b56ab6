import { describe, expect, it } from "vitest";

import { replaceTrigger, triggerAt } from "../../src/webview/trigger";

describe("triggerAt", () => {
  it("finds @ after a space or at the start, with the typed query", () => {
    expect(triggerAt("look at @inv", 12)).toEqual({ trigger: "@", query: "inv", start: 8 });
    expect(triggerAt("@", 1)).toEqual({ trigger: "@", query: "", start: 0 });
  });
  it("ignores @ inside a word (an e-mail address) and after the query ended", () => {
    expect(triggerAt("ada@example.org", 15)).toBeUndefined();
    expect(triggerAt("@inv and more", 13)).toBeUndefined();
  });
  it("finds / only at the very start", () => {
    expect(triggerAt("/pla", 4)).toEqual({ trigger: "/", query: "pla", start: 0 });
    expect(triggerAt("a /pla", 6)).toBeUndefined();
    expect(triggerAt("/plan x", 7)).toBeUndefined();
  });
});

describe("replaceTrigger", () => {
  it("replaces the word under the caret and puts the caret after a space", () => {
    const text = "fix @inv please";
    const found = triggerAt(text, 8)!;
    expect(replaceTrigger(text, 8, found, "@inventory.py")).toEqual({ text: "fix @inventory.py please", caret: 18 });
  });
});
