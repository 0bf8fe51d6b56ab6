"""The client's line index (``split_lines``) and ``dominant_line_ending`` against plain references.

``split_lines`` takes C-speed paths for all-LF and all-CRLF texts (a Python loop over every line
of a 10 MB file was most of the headless client's edit time); each path must give the
same lines and starts as a straightforward scan by LSP's line rules, and ``dominant_line_ending``
its shortcut for texts without CR the same ending as counting.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.client.text import DocumentText, apply_text_edits, split_lines
from cadenza.tools.textfile import dominant_line_ending

PIECES = ["a", "bc", "é", "😀", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\u2028", " "]


def reference_split(text: str) -> tuple[list[str], list[int]]:
    """Lines and their starts, one terminator match at a time (LSP: CRLF, CR, LF only)."""
    lines, starts, last = [], [0], 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        lines.append(text[last : match.start()])
        last = match.end()
        starts.append(last)
    lines.append(text[last:])
    return lines, starts


def reference_ending(text: str, default: str = "\n") -> str:
    counts = {"\r\n": 0, "\n": 0, "\r": 0}
    first: dict[str, int] = {}
    for match in re.finditer(r"\r\n|\r|\n", text):
        counts[match.group()] += 1
        first.setdefault(match.group(), match.start())
    most = max(counts.values())
    if most == 0:
        return default
    return min((e for e in counts if counts[e] == most), key=lambda e: first[e])


texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@given(texts)
def test_split_lines_matches_a_scan_by_lsp_rules(text: str) -> None:
    assert split_lines(text) == reference_split(text)


@given(st.lists(st.sampled_from(["x", "é😀", "", "  y"]), min_size=1, max_size=30))
def test_all_lf_and_all_crlf_texts_with_and_without_a_last_newline(lines: list[str]) -> None:
    for ending in ("\n", "\r\n"):
        for tail in ("", ending):
            text = ending.join(lines) + tail
            assert split_lines(text) == reference_split(text)


def test_mixed_and_lone_cr_texts_take_the_general_path() -> None:
    for text in ("a\r\nb\nc", "a\rb\r\nc", "a\r\r\n", "\r", "\r\n\n", "x\r\ny\r\n\r"):
        assert split_lines(text) == reference_split(text)


@given(texts)
def test_dominant_line_ending_matches_counting(text: str) -> None:
    assert dominant_line_ending(text) == reference_ending(text)
    assert dominant_line_ending(text, "\r\n") == reference_ending(text, "\r\n")


def test_utf16_positions_on_a_crlf_file_apply_at_the_right_place() -> None:
    text = "😀 one\r\ntwo é\r\nthree"
    doc = DocumentText(text=text, codec=PositionCodec())
    # UTF-16 units: the emoji is 2, so "_" replaces the space; line 2 is replaced whole.
    edits = [
        types.TextEdit(range=types.Range(types.Position(1, 4), types.Position(1, 5)), new_text="E"),
        types.TextEdit(range=types.Range(types.Position(0, 2), types.Position(0, 3)), new_text="_"),
        types.TextEdit(range=types.Range(types.Position(2, 0), types.Position(2, 5)), new_text="3"),
    ]
    assert apply_text_edits(doc, edits) == "😀_one\r\ntwo E\r\n3"
