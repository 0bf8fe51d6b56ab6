import { describe, expect, it, vi } from "vitest";

import { completionMiddleware, completionsEnabled } from "../src/completions";
import { configuration } from "./configuration";

describe("completionsEnabled", () => {
  it("is on by default and follows the setting", () => {
    expect(completionsEnabled(configuration({}))).toBe(true);
    expect(completionsEnabled(configuration({ "completions.enabled": false }))).toBe(false);
    expect(completionsEnabled(configuration({ "completions.enabled": true }))).toBe(true);
  });
});

describe("completionMiddleware", () => {
  it("forwards the request while enabled and sends nothing while disabled", () => {
    let enabled = true;
    const middleware = completionMiddleware(() => enabled);
    const next = vi.fn(() => ["item"]);
    expect(middleware.provideInlineCompletionItems("doc", "pos", "ctx", "token", next)).toEqual(["item"]);
    expect(next).toHaveBeenCalledWith("doc", "pos", "ctx", "token");
    enabled = false;
    expect(middleware.provideInlineCompletionItems("doc", "pos", "ctx", "token", next)).toBeNull();
    expect(next).toHaveBeenCalledTimes(1);
  });
});
