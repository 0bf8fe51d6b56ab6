import { describe, expect, it, vi } from "vitest";

import { completionMiddleware, completionsEnabled, completionsStatus, toggleScope } from "../src/completions";
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

describe("toggleScope", () => {
  it("writes where the setting is set, else the user settings", () => {
    expect(toggleScope(undefined)).toBe("global");
    expect(toggleScope({ defaultValue: true })).toBe("global");
    expect(toggleScope({ defaultValue: true, globalValue: false })).toBe("global");
    expect(toggleScope({ globalValue: false, workspaceValue: true })).toBe("workspace");
    expect(toggleScope({ workspaceValue: true, workspaceFolderValue: false })).toBe("workspaceFolder");
  });
});

describe("completionsStatus", () => {
  it("says on or off and what a click does", () => {
    expect(completionsStatus(true).text).toContain("on");
    expect(completionsStatus(true).tooltip).toContain("turn them off");
    expect(completionsStatus(false).text).toContain("off");
    expect(completionsStatus(false).tooltip).toContain("turn them on");
  });
});
