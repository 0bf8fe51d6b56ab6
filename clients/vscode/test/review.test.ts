import { describe, expect, it } from "vitest";

import { fileReviews, hunkStats, parseChanges, pendingHunks, reviewLenses, reviewOutcome, reviewSummary } from "../src/hunks";

const range = (a: number, b: number) => ({ start: { line: a, character: 0 }, end: { line: b, character: 0 } });
const uri = "file:///w/inventory.py";

function changes(states: string[]) {
  return {
    sessionId: "s",
    files: [
      {
        uri,
        path: "inventory.py",
        hunks: states.map((state, i) => ({ id: `h${i}`, range: range(i * 10, i * 10 + 1), oldText: "a\n", newText: "b\nc\n", state })),
      },
    ],
  };
}

describe("parseChanges", () => {
  it("keeps well-formed hunks and drops the rest; an unknown state is pending", () => {
    const parsed = parseChanges(
      {
        files: [
          { uri, path: "inventory.py", hunks: [{ id: "h1", range: range(1, 2), oldText: "x", newText: "y", state: "odd" }, { id: 3 }] },
          { path: "no uri" },
        ],
      },
      "s",
    );
    expect(parsed).toEqual({
      sessionId: "s",
      files: [{ uri, path: "inventory.py", hunks: [{ id: "h1", range: range(1, 2), oldText: "x", newText: "y", state: "pending" }] }],
    });
    expect(parseChanges(null, "s")).toEqual({ sessionId: "s", files: [] });
  });

  it("keeps the server's sentences on what the review cannot list", () => {
    const note = "Not listed for review: 1 file `make` changed that is not text, over 1 MB or a link (app.bin).";
    expect(parseChanges({ files: [], unlisted: [note, 3, ""] }, "s")).toEqual({ sessionId: "s", files: [], unlisted: [note] });
    expect(parseChanges({ files: [], unlisted: "no" }, "s")).toEqual({ sessionId: "s", files: [] });
  });
});

describe("review counts and words", () => {
  it("counts per file and says what waits", () => {
    const c = parseChanges(changes(["pending", "pending"]), "s");
    expect(fileReviews(c)).toEqual([{ uri, path: "inventory.py", pending: 2, kept: 0, undone: 0 }]);
    expect(reviewSummary(fileReviews(c))).toBe("2 changes in 1 file to review.");
    expect(pendingHunks(c, uri).map((h) => h.id)).toEqual(["h0", "h1"]);
    expect(pendingHunks(c, "file:///other")).toEqual([]);
    expect(hunkStats(c.files[0].hunks[0])).toBe("+2 −1");
  });

  it("says what a keep or an undo did, and when everything is reviewed", () => {
    const before = parseChanges(changes(["pending", "pending"]), "s");
    const kept = parseChanges(changes(["kept", "pending"]), "s");
    expect(reviewOutcome("keep", before, kept)).toBe("kept 1 change in inventory.py.");
    expect(reviewSummary(fileReviews(kept))).toBe("1 change in 1 file to review (1 kept).");
    const both = parseChanges(changes(["kept", "undone"]), "s");
    expect(reviewOutcome("undo", kept, both)).toBe("undid 1 change in inventory.py.");
    expect(reviewSummary(fileReviews(both))).toBe("Changes of the last turn reviewed: 1 kept, 1 undone.");
    expect(reviewOutcome("undo", both, both)).toBe("nothing left to undo.");
  });
});

describe("the review's CodeLenses", () => {
  const lensesOf = (states: string[]) => reviewLenses(new Map([["s", parseChanges(changes(states), "s")]]), uri);

  it("offers Keep / Undo per pending hunk and per file", () => {
    const lenses = lensesOf(["pending", "pending"]);
    expect(lenses.map((l) => [l.line, l.title, l.command])).toEqual([
      [0, "Cadenza: 2 changes to review · Keep file", "cadenza.keepFile"],
      [0, "Undo file", "cadenza.undoFile"],
      [0, "Keep (+2 −1)", "cadenza.keepHunk"],
      [0, "Undo", "cadenza.undoHunk"],
      [10, "Keep (+2 −1)", "cadenza.keepHunk"],
      [10, "Undo", "cadenza.undoHunk"],
    ]);
    expect(lenses[5].arguments).toEqual(["s", "h1", uri]);
  });

  it("drops reviewed hunks, and every lens once none is pending", () => {
    expect(lensesOf(["kept", "pending"]).map((l) => [l.line, l.title])).toEqual([
      [0, "Cadenza: 1 change to review · Keep file"],
      [0, "Undo file"],
      [10, "Keep (+2 −1)"],
      [10, "Undo"],
    ]);
    expect(lensesOf(["kept", "undone"])).toEqual([]);
    expect(reviewLenses(new Map([["s", parseChanges(changes(["pending"]), "s")]]), "file:///w/other.py")).toEqual([]);
  });
});
