r"""Edits proportional to the change, at any file size.

A file of n lines (up to 100,000) with k random line changes (replaced, inserted, deleted)
must give ``TextEdit``s the size of the changed lines, never one replacement over the span
between two distant changes. Files are of unique lines, of five lines repeated at random, and
of one line repeated; endings LF, CRLF or mixed (``\n``, ``\r\n``, ``\r``), with or without a
final line break; lines carry astral characters so positions go through the codec.

Every result is checked by an independent applier (replacements applied back to front on the
old text; ``TextEdit``s through ``harness.apply_text_edits``), for order, for distance between
replacements, for CRLFs kept whole, and for size: each replacement touches no more old lines
than were changed (plus the line an insertion lands on), and in files of unique lines only
lines next to a change.
"""

from __future__ import annotations

import itertools
import random
from bisect import bisect_right
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.lsp.edits import Replacement, minimal_replacements, text_edits
from cadenza.tools.textfile import LINE_BREAK
from tests.lsp.harness import apply_text_edits

KINDS = ("unique", "repetitive", "identical")
ENDINGS = ("lf", "crlf", "mixed")


@dataclass(frozen=True)
class Changed:
    """A file, the file after k line changes, and where in the old lines they were."""

    old: str
    new: str
    places: frozenset[int]
    """Old line numbers replaced or deleted, and those an insertion went before."""
    count: int


def _content(kind: str, n: int, rnd: random.Random) -> str:
    if kind == "unique":
        return f"line {n} 😀 x = {n}" if n % 7 == 0 else f"line {n}"
    if kind == "repetitive":
        return ["}", "", "    pass", "x = 1", "𝄞"][rnd.randrange(5)] + " "
    return "same"


def _ending(endings: str, rnd: random.Random) -> str:
    return {"lf": "\n", "crlf": "\r\n"}.get(endings) or rnd.choice(["\n", "\r\n", "\r"])


def changed_file(
    n: int, kind: str, endings: str, final_break: bool, count: int, seed: int
) -> Changed:
    """``count`` random line changes in a generated file of ``n`` lines.

    Contents are never empty and hold no line break, so a ``\\r`` ending never joins the next
    line into a CRLF and the lines stay the lines.
    """
    rnd = random.Random(seed)
    old = [(_content(kind, i, rnd), _ending(endings, rnd)) for i in range(n)]
    if not final_break:
        old[-1] = (old[-1][0], "")
    new: list[tuple[str, str] | None] = list(old)
    inserted: dict[int, list[tuple[str, str]]] = {}
    places = sorted(rnd.sample(range(n), min(count, n)))
    for number, at in enumerate(places):
        line = (f"changed {number} ✓", old[at][1] or "")
        action = rnd.choice(["replace", "insert", "delete"] if n > 1 else ["replace"])
        if action == "replace":
            new[at] = line
        elif action == "delete" and at < n - 1:
            new[at] = None
        else:
            inserted[at] = [(line[0], line[1] or _ending(endings, rnd))]
    lines = itertools.chain.from_iterable(
        [*inserted.get(i, []), *([line] if line is not None else [])] for i, line in enumerate(new)
    )
    return Changed(
        old="".join(c + e for c, e in old),
        new="".join(c + e for c, e in lines),
        places=frozenset(places),
        count=len(places),
    )


def applied(old: str, replacements: list[Replacement]) -> str:
    """The independent applier: back to front, each on the old text's offsets."""
    text = old
    for change in reversed(replacements):
        text = text[: change.start] + change.text + text[change.end :]
    return text


UNITS = {
    "utf-8": lambda ch: len(ch.encode("utf-8")),
    "utf-16": lambda ch: len(ch.encode("utf-16-le")) // 2,
    "utf-32": lambda ch: 1,
}


def applied_edits(old: str, edits: list[types.TextEdit], encoding: str) -> str:
    """``harness.apply_text_edits``, with the line starts found once (it splits per position)."""
    starts = [0, *(m.end() for m in LINE_BREAK.finditer(old))]
    width = UNITS[encoding]

    def offset(position: types.Position) -> int:
        units, at = 0, starts[position.line]
        while units < position.character:
            assert old[at] not in "\r\n", "past the end of the line"
            units += width(old[at])
            at += 1
        assert units == position.character, "a position inside a character"
        return at

    spans = sorted((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits)
    text = old
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


def check(case: Changed, *, local: bool, encoding: str = "utf-16") -> list[Replacement]:
    """All the properties of the module docstring, for ``minimal_replacements`` and edits."""
    old, new = case.old, case.new
    replacements = minimal_replacements(old, new)
    assert applied(old, replacements) == new
    for before, after in itertools.pairwise(replacements):
        assert before.end < after.start, "ordered, apart, never overlapping"
    starts = [0, *(m.end() for m in LINE_BREAK.finditer(old))]
    for change in replacements:
        for offset in (change.start, change.end):
            assert old[offset - 1 : offset + 1] != "\r\n" or offset == 0, "a CRLF split"
        first = bisect_right(starts, change.start) - 1
        last = bisect_right(starts, max(change.end - 1, change.start)) - 1
        assert last - first + 1 <= case.count + 1, "no larger than the changed lines"
        assert LINE_BREAK.subn("", change.text)[1] <= case.count + 1
        if local:
            for line in range(first, last + 1):
                assert {line - 1, line, line + 1} & case.places, f"line {line} is untouched"
    edits = text_edits(old, new, PositionCodec(encoding))  # type: ignore[arg-type]
    plain = [e for e in edits if isinstance(e, types.TextEdit)]
    assert len(plain) == len(replacements)
    if len(old) < 100_000:
        assert apply_text_edits(old, plain, encoding) == new
    assert applied_edits(old, plain, encoding) == new
    return replacements


SMALL = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SMALL
@given(
    st.sampled_from([1, 2, 3, 10, 100, 2_000]),
    st.sampled_from(KINDS),
    st.sampled_from(ENDINGS),
    st.booleans(),
    st.integers(1, 12),
    st.integers(0, 2**32),
    st.sampled_from(["utf-16", "utf-8", "utf-32"]),
)
def test_k_line_changes_give_k_line_edits(
    n: int, kind: str, endings: str, final_break: bool, count: int, seed: int, encoding: str
) -> None:
    case = changed_file(n, kind, endings, final_break, count, seed)
    check(case, local=kind == "unique", encoding=encoding)


@pytest.mark.parametrize(
    ("kind", "endings", "final_break", "count"),
    [
        ("unique", "crlf", True, 2),
        ("unique", "mixed", False, 40),
        ("repetitive", "lf", False, 2),
        ("repetitive", "mixed", True, 40),
        ("identical", "crlf", False, 2),
        ("identical", "mixed", True, 40),
    ],
)
def test_100k_line_files(kind: str, endings: str, final_break: bool, count: int) -> None:
    """A few examples at full size (one deterministic file each, so the suite stays fast)."""
    case = changed_file(100_000, kind, endings, final_break, count, seed=count)
    replacements = check(case, local=kind == "unique")
    assert len(replacements) <= count


def test_two_changes_26000_lines_apart_are_two_small_edits() -> None:
    """The issue's case: a 27,000-line file, its 300th and 26,700th lines changed."""
    lines = [f"value_{n} = compute({n})\n" for n in range(27_000)]
    old = "".join(lines)
    lines[300] = "value_300 = compute(301)\n"
    lines[26_700] = "value_26700 = compute(-1)\n"
    edits = text_edits(old, "".join(lines), PositionCodec("utf-16"))  # type: ignore[arg-type]
    assert [(e.range.start.line, e.range.end.line) for e in edits] == [(300, 300), (26_700, 26_700)]
    assert [e.new_text for e in edits] == ["1", "-1"]
