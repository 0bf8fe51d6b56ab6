import { describe, expect, it } from "vitest";

import { isUnsupportedCommand, unsupportedMessage, errorText } from "../src/errors";
import { CANCELLED, describePermission, optionByName, optionForPolicy, selected } from "../src/permissions";
import type { PermissionOption } from "../src/protocol";
import { needsConfirmation, staleReason, touchedUris, type WorkspaceEdit } from "../src/workspaceEdit";

const OPTIONS: PermissionOption[] = [
  { optionId: "a1", name: "Allow once", kind: "allow_once" },
  { optionId: "a2", name: "Always allow", kind: "allow_always" },
  { optionId: "r1", name: "Reject", kind: "reject_once" },
  { optionId: "r2", name: "Always reject", kind: "reject_always" },
];

describe("permissions", () => {
  it("asks under the ask policy", () => {
    expect(optionForPolicy(OPTIONS, "ask")).toBeUndefined();
  });

  it("answers once-only options first under allow and reject", () => {
    expect(optionForPolicy(OPTIONS, "allow")!.optionId).toBe("a1");
    expect(optionForPolicy(OPTIONS, "reject")!.optionId).toBe("r1");
    expect(optionForPolicy(OPTIONS.slice(1, 2), "allow")!.optionId).toBe("a2");
    expect(optionForPolicy(OPTIONS.slice(3), "reject")!.optionId).toBe("r2");
    expect(optionForPolicy(OPTIONS.slice(2), "allow")).toBeUndefined();
  });

  it("builds ACP's outcomes", () => {
    expect(selected("a1")).toEqual({ outcome: { outcome: "selected", optionId: "a1" } });
    expect(CANCELLED).toEqual({ outcome: { outcome: "cancelled" } });
    expect(optionByName(OPTIONS, "Always reject")!.optionId).toBe("r2");
    expect(optionByName(OPTIONS, undefined)).toBeUndefined();
  });

  it("describes a shell command by its command line", () => {
    expect(
      describePermission({
        sessionId: "s",
        toolCall: { title: "run_command", kind: "execute", rawInput: { command: "pytest -q" } },
        options: OPTIONS,
      }),
    ).toEqual({ message: "Cadenza wants to run `pytest -q`", detail: "" });
    // The server's title is a gerund ("running `…`"): never "wants to run running".
    expect(
      describePermission({
        sessionId: "s",
        toolCall: { title: "running `touch marker.txt`", kind: "execute", rawInput: { command: "touch marker.txt" } },
        options: OPTIONS,
      }).message,
    ).toBe("Cadenza wants to run `touch marker.txt`");
    const long = "x".repeat(130);
    expect(describePermission({ sessionId: "s", toolCall: { rawInput: { command: long } }, options: [] })).toEqual({
      message: "Cadenza wants to run a command",
      detail: long,
    });
    expect(
      describePermission({ sessionId: "s", toolCall: { title: "deleting old.py", kind: "delete", rawInput: { path: "old.py" } }, options: [] }),
    ).toEqual({ message: "Cadenza asks before deleting old.py", detail: '{\n  "path": "old.py"\n}' });
    expect(describePermission({ sessionId: "s", toolCall: { title: "mcp_search", rawInput: "q" }, options: [] }).message).toBe(
      "Cadenza asks before calling mcp_search",
    );
    expect(describePermission({ sessionId: "s", toolCall: { kind: "fetch", rawInput: { url: "u" } }, options: [] }).detail).toBe(
      '{\n  "url": "u"\n}',
    );
  });
});

describe("isUnsupportedCommand", () => {
  const pygls = { code: -32602, message: "Invalid Params: Command name 'cadenza.undoSession' is not defined" };

  it("recognizes pygls's answer to an unknown command", () => {
    expect(isUnsupportedCommand(pygls, "cadenza.undoSession", undefined)).toBe(true);
    expect(isUnsupportedCommand(pygls, "cadenza.undoSession", ["cadenza.startSession"])).toBe(true);
  });

  it("recognizes MethodNotFound", () => {
    expect(isUnsupportedCommand({ code: -32601, message: "x" }, "c", ["c"])).toBe(true);
  });

  it("takes InvalidParams for an advertised command as a real error", () => {
    const bad = { code: -32602, message: "Invalid Params: cadenza.undoSession: sessionId: Field required" };
    expect(isUnsupportedCommand(bad, "cadenza.undoSession", ["cadenza.undoSession"])).toBe(false);
    expect(isUnsupportedCommand({ code: -32603, message: "boom" }, "c", [])).toBe(false);
    expect(isUnsupportedCommand(undefined, "c", [])).toBe(false);
  });

  it("writes a clear message", () => {
    expect(unsupportedMessage("Undo Session", "cadenza.undoSession", pygls)).toBe(
      "This Cadenza server does not support Undo Session yet (cadenza.undoSession: Invalid Params: Command name 'cadenza.undoSession' is not defined (-32602)).",
    );
    expect(errorText(new Error("x"))).toBe("x");
    expect(errorText("plain")).toBe("plain");
  });
});

describe("workspace edits", () => {
  const edit: WorkspaceEdit = {
    documentChanges: [
      { kind: "create", uri: "file:///w/new.py", options: { overwrite: false, ignoreIfExists: false } },
      {
        textDocument: { uri: "file:///w/new.py", version: null },
        edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: "x\n" }],
      },
      {
        textDocument: { uri: "file:///w/app.py", version: 4 },
        edits: [{ range: { start: { line: 0, character: 4 }, end: { line: 0, character: 9 } }, newText: "welcome" }],
      },
    ],
  };

  it("finds a stale versioned edit", () => {
    expect(staleReason(edit, () => undefined)).toBeUndefined();
    expect(staleReason(edit, (uri) => (uri === "file:///w/app.py" ? 4 : undefined))).toBeUndefined();
    expect(staleReason(edit, (uri) => (uri === "file:///w/app.py" ? 6 : undefined))).toBe(
      "file:///w/app.py changed in the editor since the agent read it (version 4, the editor has 6)",
    );
  });

  it("tells a change marked for review", () => {
    expect(needsConfirmation(edit)).toBe(false);
    expect(needsConfirmation({ ...edit, changeAnnotations: { a: { label: "x", needsConfirmation: false } } })).toBe(false);
    expect(needsConfirmation({ ...edit, changeAnnotations: { a: { label: "x" }, b: { label: "y", needsConfirmation: true } } })).toBe(true);
  });

  it("lists the touched documents once each", () => {
    expect(touchedUris(edit)).toEqual(["file:///w/new.py", "file:///w/app.py"]);
    expect(
      touchedUris({
        documentChanges: [
          { kind: "rename", oldUri: "file:///a", newUri: "file:///b" },
          { kind: "delete", uri: "file:///c" },
        ],
        changes: { "file:///d": [] },
      }),
    ).toEqual(["file:///b", "file:///d"]);
  });
});
