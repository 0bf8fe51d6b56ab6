import { describe, expect, it } from "vitest";

import { parseMentions, rankPaths } from "../src/mentions";

describe("rankPaths", () => {
  const paths = ["src/inventory.py", "docs/inventory-notes.md", "report.py", "tests/test_inv.py", "vendor/a/b/inventory.py"];
  it("puts names starting with the query first, then names containing it, then paths, then fuzzy matches", () => {
    expect(rankPaths(paths, "inven")).toEqual(["src/inventory.py", "docs/inventory-notes.md", "vendor/a/b/inventory.py"]);
    expect(rankPaths(paths, "tinv")).toEqual(["tests/test_inv.py"]);
    expect(rankPaths(paths, "", 2)).toEqual(["report.py", "src/inventory.py"]);
  });
});

describe("parseMentions", () => {
  it("keeps well-formed mentions only", () => {
    expect(
      parseMentions([
        { kind: "file", uri: "file:///w/a.py", label: "a.py" },
        { kind: "file", label: "no uri" },
        { kind: "selection", label: "selection" },
        { kind: "shell", label: "rm -rf" },
        null,
      ]),
    ).toEqual([
      { kind: "file", uri: "file:///w/a.py", label: "a.py" },
      { kind: "selection", label: "selection" },
    ]);
    expect(parseMentions("nope")).toEqual([]);
  });
});
