"""The line diff (``cadenza.tools.linediff``): exact, in order, and as small as the change.

Sequences come from tiny alphabets (so lines repeat: the repetitive files where difflib's
heuristics and a unique-line diff both fail), from unique lines, and from one line repeated;
changes are random line replacements, insertions and deletions.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cadenza.tools.linediff import Opcode, changed_line_spans, line_opcodes
from cadenza.tools.textfile import carry_line_endings

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rebuilt(a: list[str], b: list[str], ops: list[Opcode]) -> list[str]:
    """Apply ``ops`` to ``a`` independently; check they tile both sides in order."""
    out: list[str] = []
    i = j = 0
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j), "opcodes tile both sides in order"
        assert i1 <= i2 and j1 <= j2 and (i1 < i2 or j1 < j2)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            out += a[i1:i2]
        else:
            assert tag == {(True, True): "replace", (True, False): "delete"}.get(
                (i1 < i2, j1 < j2), "insert"
            )
            out += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    return out


def changed_lines(ops: list[Opcode]) -> int:
    """Lines outside the equal blocks, counting the larger side of each hunk."""
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")


@st.composite
def edited(draw: st.DrawFn) -> tuple[list[str], list[str], int]:
    """Lines and the lines after some random line edits; the number of edits."""
    alphabet = draw(st.sampled_from([1, 2, 3, 5, 50, 10_000]))
    a = draw(st.lists(st.integers(0, alphabet - 1).map(str), max_size=60))
    b = list(a)
    edits = draw(st.integers(0, 6))
    for n in range(edits):
        at = draw(st.integers(0, len(b)))
        kind = draw(st.sampled_from(["replace", "insert", "delete"]))
        line = draw(st.sampled_from([f"new {n}", str(draw(st.integers(0, alphabet)))]))
        if kind == "insert" or at == len(b):
            b.insert(at, line)
        elif kind == "delete":
            del b[at]
        else:
            b[at] = line
    return a, b, edits


@PROPERTY
@given(edited())
def test_opcodes_rebuild_the_new_lines_and_stay_small(
    case: tuple[list[str], list[str], int],
) -> None:
    a, b, edits = case
    ops = line_opcodes(a, b)
    assert rebuilt(a, b, ops) == b
    # At most twice the edits: a line moved (deleted here, the same line inserted there) may
    # be kept at its new place as a patience anchor, as git's patience diff does.
    assert changed_lines(ops) <= 2 * edits


@PROPERTY
@given(
    st.lists(st.sampled_from(["a", "b", "c", "}"]), max_size=40),
    st.lists(st.sampled_from(["a", "b", "c", "}", "d"]), max_size=40),
)
def test_any_two_sequences_are_rebuilt(a: list[str], b: list[str]) -> None:
    assert rebuilt(a, b, line_opcodes(a, b)) == b


def _far_changes(a: list[str], count: int, seed: int) -> list[str]:
    """``a`` with ``count`` lines replaced, inserted before or deleted, at random places."""
    rnd = random.Random(seed)
    b = list(a)
    for n, at in enumerate(sorted(rnd.sample(range(len(a)), count), reverse=True)):
        if n % 3 == 0:
            b[at] = f"new {n}"
        elif n % 3 == 1:
            b.insert(at, f"new {n}")
        else:
            del b[at]
    return b


def test_large_files_give_hunks_of_the_changed_lines() -> None:
    """100,000 lines, unique, repetitive and identical, with 2 and with 300 changes."""
    rnd = random.Random(7)
    files = {
        "unique": [f"line {n}" for n in range(100_000)],
        "five lines": [str(rnd.randrange(5)) for _ in range(100_000)],
        "identical": ["same"] * 100_000,
    }
    for name, a in files.items():
        for count in (2, 300):
            b = _far_changes(a, count, seed=count)
            ops = line_opcodes(a, b)
            assert rebuilt(a, b, ops) == b, name
            assert changed_lines(ops) <= count, (name, count)
            hunks = [op for op in ops if op[0] != "equal"]
            assert max(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in hunks) <= 2, (name, count)


def test_a_rewrite_is_one_hunk() -> None:
    a = [f"old {n}" for n in range(50_000)]
    b = [f"new {n}" for n in range(40_000)]
    assert line_opcodes(a, b) == [("replace", 0, 50_000, 0, 40_000)]


def test_a_moved_unique_line_in_a_repetitive_region_is_no_anchor() -> None:
    a = ["head", *["x"] * 30, "tail"]
    b = ["tail", *["x"] * 30, "head"]
    assert changed_lines(line_opcodes(a, b)) == 2
    b = [*["x"] * 31, "head"]  # "head" moved to the end, "tail" deleted
    assert changed_lines(line_opcodes(a, b)) == 2


def test_trivial_cases() -> None:
    assert line_opcodes([], []) == []
    assert line_opcodes(["a"], []) == [("delete", 0, 1, 0, 0)]
    assert line_opcodes([], ["a"]) == [("insert", 0, 0, 0, 1)]
    assert line_opcodes(["a", "b"], ["a", "b"]) == [("equal", 0, 2, 0, 2)]


def test_line_endings_are_carried_past_a_distant_change() -> None:
    """``carry_line_endings`` on 30,000 lines: each kept line keeps its own ending.

    The pairing used to be by position above 20,000 lines: a line inserted at the top and one
    dropped at the bottom gave every line between the ending of its neighbour.
    """
    old_lines = [f"line {n}" + ("\r\n" if n % 2 else "\n") for n in range(30_000)]
    typed = "inserted\n" + "".join(line.rstrip("\r\n") + "\n" for line in old_lines[:-1])
    result = carry_line_endings("".join(old_lines), typed, "\n")
    assert result == "inserted\n" + "".join(old_lines[:-1])


def test_text_spans_of_sparse_and_moved_changes() -> None:
    """``changed_line_spans`` on 40,000 lines: long runs are cut on characters, exactly."""
    lines = [f"line {n}\r\n" if n % 3 else f"line {n}\n" for n in range(40_000)]
    old = "".join(lines)
    sparse = list(lines)
    for at in range(1_000, 40_000, 4_000):
        sparse[at] = "changed\n"
    moved = lines[:1_000] + lines[1_500:] + lines[1_000:1_500]
    for new_lines, most in ((sparse, 10), (moved, 1_000)):
        new = "".join(new_lines)
        spans = changed_line_spans(old, new)
        text = old
        for a1, a2, b1, b2 in reversed(spans):
            text = text[:a1] + new[b1:b2] + text[a2:]
        assert text == new
        changed = sum(
            max(old.count("\n", a1, a2), new.count("\n", b1, b2)) for a1, a2, b1, b2 in spans
        )
        assert changed <= most


def test_reordered_files_are_rebuilt() -> None:
    """Worst cases (lines shuffled, reversed): exact, whatever the hunks."""
    rnd = random.Random(5)
    unique = [f"line {n}" for n in range(20_000)]
    repetitive = [str(rnd.randrange(5)) for _ in range(20_000)]
    for a in (unique, repetitive):
        for b in (rnd.sample(a, len(a)), a[::-1]):
            assert rebuilt(a, b, line_opcodes(a, b)) == b
