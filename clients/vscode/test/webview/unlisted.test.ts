import { describe, expect, it } from "vitest";

import type { Entry } from "../../src/sessions";
import { turnCommands, unlistedText } from "../../src/webview/unlisted";

function tool(toolKind: string, status: "completed" | "failed" = "completed"): Entry {
  return { kind: "tool", toolCallId: `${toolKind}-${status}`, title: toolKind, toolKind, status, diffs: [] };
}

describe("commands the review does not list", () => {
  it("counts the latest turn's commands only", () => {
    const entries: Entry[] = [tool("execute"), { kind: "prompt", text: "again" }, tool("edit"), tool("execute"), tool("execute", "failed")];
    expect(turnCommands(entries)).toBe(2);
    expect(turnCommands([tool("execute"), tool("execute")])).toBe(2);
    expect(turnCommands([tool("read")])).toBe(0);
  });

  it("says so in plain words", () => {
    expect(unlistedText(1)).toBe("Not listed for review: changes made by the command it ran (see Source Control for them).");
    expect(unlistedText(3)).toContain("the 3 commands it ran");
  });
});
