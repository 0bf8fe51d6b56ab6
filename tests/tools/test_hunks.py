r"""``text_hunks``: an edit as its changed lines with up to three lines of context.

Checked against an independent applier (the old text split into LSP lines with a regex, each
hunk's old lines replaced back to front by its new text), on files of up to 100,000 lines of
unique, repetitive or identical lines with LF, CRLF or mixed endings, and on arbitrary texts
(any characters, ``\r`` and ``\n`` included). Each hunk's texts are the lines at its line
numbers in both files, it holds at most ``2 * 3`` unchanged lines besides the changed ones
(as ``diff -U3``), and no two hunks are close enough for their contexts to touch.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cadenza.tools.hunks import CONTEXT_LINES, TextHunk, text_hunks
from cadenza.tools.textfile import lines_with_ends
from tests.lsp.test_edit_hunks import ENDINGS, KINDS, changed_file


def lines(text: str) -> list[str]:
    """LSP lines with their breaks (a final line without one included)."""
    return lines_with_ends(text)


def applied(old: str, hunks: list[TextHunk]) -> str:
    """The independent applier: each hunk's old lines replaced, back to front."""
    out = lines(old)
    for hunk in reversed(hunks):
        count = len(lines(hunk.old_text))
        out[hunk.old_line : hunk.old_line + count] = [hunk.new_text]
    return "".join(out)


def check(old: str, new: str, context: int = CONTEXT_LINES) -> list[TextHunk]:
    hunks = text_hunks(old, new, context)
    assert applied(old, hunks) == new
    old_lines, new_lines = lines(old), lines(new)
    for hunk in hunks:
        at_old = old_lines[hunk.old_line : hunk.old_line + len(lines(hunk.old_text))]
        at_new = new_lines[hunk.new_line : hunk.new_line + len(lines(hunk.new_text))]
        assert "".join(at_old) == hunk.old_text, "old_text is the old file's lines there"
        assert "".join(at_new) == hunk.new_text, "new_text is the new file's lines there"
        assert hunk.old_text != hunk.new_text
    for before, after in itertools.pairwise(hunks):
        end = before.old_line + len(lines(before.old_text))
        assert after.old_line - end > 0, "hunks whose contexts touch are one hunk"
    return hunks


def unchanged_lines(hunk: TextHunk) -> int:
    """The lines a hunk holds besides the changed ones (common head and tail lines)."""
    a, b = lines(hunk.old_text), lines(hunk.new_text)
    short = min(len(a), len(b))
    head = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), short)
    tail = 0
    while tail < short - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head + tail


SMALL = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SMALL
@given(
    st.sampled_from([1, 2, 3, 10, 100, 2_000]),
    st.sampled_from(KINDS),
    st.sampled_from(ENDINGS),
    st.booleans(),
    st.integers(1, 12),
    st.integers(0, 2**32),
)
def test_line_changes_give_small_hunks(
    n: int, kind: str, endings: str, final_break: bool, count: int, seed: int
) -> None:
    case = changed_file(n, kind, endings, final_break, count, seed)
    hunks = check(case.old, case.new)
    assert len(hunks) <= case.count
    if kind == "unique":  # every changed line is its own; the context is at most 3 + 3 lines
        for hunk in hunks:
            assert unchanged_lines(hunk) <= 2 * CONTEXT_LINES


@SMALL
@given(
    st.text(alphabet=st.sampled_from("ab\r\n\x0c\u2028é😀"), max_size=60),
    st.text(alphabet=st.sampled_from("ab\r\n\x0c\u2028é😀"), max_size=60),
    st.integers(0, 4),
)
@example("\r", "a\r", 0)  # text inserted before a break: the hunk is the whole new line
@example("x\n", "x\nb\n", 0)
def test_any_two_texts(old: str, new: str, context: int) -> None:
    """Arbitrary texts: CRs and LFs anywhere, breaks LSP does not count, astral characters."""
    check(old, new, context)


@SMALL
@given(st.text(alphabet=st.sampled_from("ab\r\n"), max_size=40), st.data())
def test_a_change_inside_a_text(old: str, data: st.DataObject) -> None:
    """A slice of a text replaced (a CR next to an LF on one side only, at either end)."""
    lo = data.draw(st.integers(0, len(old)))
    hi = data.draw(st.integers(lo, len(old)))
    middle = data.draw(st.text(alphabet=st.sampled_from("ab\r\n"), max_size=6))
    check(old, old[:lo] + middle + old[hi:])


@pytest.mark.parametrize(
    ("kind", "endings", "final_break", "count"),
    [
        ("unique", "crlf", True, 2),
        ("unique", "mixed", False, 40),
        ("repetitive", "lf", False, 40),
        ("identical", "mixed", True, 40),
    ],
)
def test_100k_line_files(kind: str, endings: str, final_break: bool, count: int) -> None:
    case = changed_file(100_000, kind, endings, final_break, count, seed=count)
    hunks = check(case.old, case.new)
    assert len(hunks) <= count
    changed = sum(len(lines(h.old_text)) + len(lines(h.new_text)) for h in hunks)
    assert changed <= count * (2 + 4 * CONTEXT_LINES), "the size of the change, not the file"


def test_one_line_of_a_large_file() -> None:
    old = "".join(f"line {n}\n" for n in range(200_000))
    new = old.replace("line 120000\n", "line 120000 changed\n")
    assert text_hunks(old, new) == [
        TextHunk(
            old_line=119_997,
            new_line=119_997,
            old_text="line 119997\nline 119998\nline 119999\nline 120000\n"
            "line 120001\nline 120002\nline 120003\n",
            new_text="line 119997\nline 119998\nline 119999\nline 120000 changed\n"
            "line 120001\nline 120002\nline 120003\n",
        )
    ]


def test_nearby_changes_share_a_hunk_and_distant_ones_do_not() -> None:
    old = [f"{n}\n" for n in range(100)]
    near, far = list(old), list(old)
    near[10], near[16] = "x\n", "y\n"  # 5 lines between: contexts touch
    far[10], far[17] = "x\n", "y\n"  # 6 lines between: still touching (3 + 3)
    assert len(text_hunks("".join(old), "".join(near))) == 1
    assert len(text_hunks("".join(old), "".join(far))) == 1
    far[17], far[18] = "17\n", "y\n"  # 7 lines between: two hunks
    assert len(text_hunks("".join(old), "".join(far))) == 2


def test_equal_texts_have_no_hunks() -> None:
    assert text_hunks("a\nb\n", "a\nb\n") == []
