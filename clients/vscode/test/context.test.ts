import { describe, expect, it } from "vitest";

import { describeContext, fenceFor, relativePath, taskWithContext } from "../src/context";

describe("taskWithContext", () => {
  it("quotes the selected lines with the file and line numbers", () => {
    const task = taskWithContext("  Add type hints  ", {
      path: "inventory.py",
      languageId: "python",
      selection: { text: "def calc_total(items):\n    return 0\n", startLine: 13, endLine: 14 },
    });
    expect(task).toBe(
      "Add type hints\n\nSelected lines 13-14 of inventory.py:\n```python\ndef calc_total(items):\n    return 0\n```",
    );
  });

  it("says line N for a one-line selection and normalizes CRLF", () => {
    const task = taskWithContext("Fix", {
      path: "a.py",
      selection: { text: "x = 1\r\n", startLine: 3, endLine: 3 },
    });
    expect(task).toBe("Fix\n\nSelected line 3 of a.py:\n```\nx = 1\n```");
  });

  it("uses a longer fence when the selection holds backticks", () => {
    expect(fenceFor("a ``` b")).toBe("````");
    expect(fenceFor("plain")).toBe("```");
    const task = taskWithContext("Fix", { path: "README.md", selection: { text: "```sh\nls\n```", startLine: 1, endLine: 3 } });
    expect(task).toContain("````\n```sh\nls\n```\n````");
  });

  it("names the active file (and cursor line) without a selection", () => {
    expect(taskWithContext("Explain", { path: "src/app.py", cursorLine: 7 })).toBe(
      "Explain\n\nActive file: src/app.py (cursor on line 7)",
    );
    expect(taskWithContext("Explain", { path: "src/app.py", selection: { text: "  ", startLine: 1, endLine: 1 } })).toBe(
      "Explain\n\nActive file: src/app.py",
    );
  });

  it("is the bare task without an editor", () => {
    expect(taskWithContext("Do it", undefined)).toBe("Do it");
  });
});

describe("describeContext", () => {
  it("tells the person what goes with the task", () => {
    expect(describeContext(undefined)).toMatch(/No file is active/);
    expect(describeContext({ path: "a.py" })).toBe("Context: the active file a.py.");
    expect(describeContext({ path: "a.py", selection: { text: "x", startLine: 2, endLine: 4 } })).toBe(
      "Context: the selected lines 2-4 of a.py.",
    );
  });
});

describe("relativePath", () => {
  it("is relative inside the root and absolute outside", () => {
    expect(relativePath("/w/proj", "/w/proj/src/a.py")).toBe("src/a.py");
    expect(relativePath("/w/proj/", "/w/proj/a.py")).toBe("a.py");
    expect(relativePath("/w/proj", "/w/project2/a.py")).toBe("/w/project2/a.py");
    expect(relativePath(undefined, "/x/a.py")).toBe("/x/a.py");
    expect(relativePath("C:\\w", "C:\\w\\a.py")).toBe("a.py");
  });
});
