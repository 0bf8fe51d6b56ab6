"""The fast paths of edits at size give the same answers as the simple definitions.

``changed_span`` (binary search over slices), ``LineIndex.position`` (line breaks counted with
``str.count``), ``client_units`` (encoding at once) and ``dominant_line_ending`` (``str.count``)
replaced per-character loops (docs/lab/performance.md); each is checked here against the plain
reference it replaced, on random texts with every LSP line break and astral characters.
"""

from __future__ import annotations

import bisect
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from cadenza.lsp.edits import LineIndex, client_units, split_lines
from cadenza.textio import changed_span
from cadenza.tools.textfile import LINE_BREAK, dominant_line_ending

PIECES = st.sampled_from(["a", "é", "😀", "中", "\r", "\n", "\r\n", "\u2028", "\x0b"])
TEXT = st.lists(PIECES, max_size=24).map("".join)
CODECS = [PositionCodec(encoding=e) for e in ("utf-16", "utf-8", "utf-32")]


def reference_span(old: str, new: str) -> tuple[int, int, int]:
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, len(old) - suffix, len(new) - suffix


def reference_position(text: str, offset: int, codec: PositionCodec) -> object:
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    if not 0 <= offset <= len(text):
        return "error"
    number = bisect.bisect_right(starts[:-1], offset) - 1
    column = offset - starts[number]
    if column > len(lines[number].rstrip("\r\n")):
        return "error"
    return codec.position_to_client_units(lines, ServerTextPosition(line=number, character=column))


def reference_ending(text: str, default: str = "\n") -> str:
    counts = Counter(match.group() for match in LINE_BREAK.finditer(text))
    return max(counts, key=lambda e: counts[e]) if counts else default


@given(TEXT, TEXT, TEXT)
def test_changed_span_is_the_common_prefix_and_suffix(a: str, b: str, c: str) -> None:
    assert changed_span(a + b, a + c) == reference_span(a + b, a + c)
    assert changed_span(b + a, c + a) == reference_span(b + a, c + a)
    assert changed_span(b, c) == reference_span(b, c)


@settings(max_examples=300)
@given(TEXT, st.lists(st.integers(min_value=-1, max_value=30), max_size=4))
def test_positions_match_the_line_split(text: str, offsets: list[int]) -> None:
    for codec in CODECS:
        index = LineIndex(text)
        for offset in [*offsets, *sorted(offsets)]:  # any order, then increasing (resumed)
            try:
                found: object = index.position(offset, codec)
            except ValueError:
                found = "error"
            assert found == reference_position(text, offset, codec)


@given(TEXT)
def test_client_units_match_pygls(text: str) -> None:
    for codec in CODECS:
        assert client_units(text, codec) == codec.client_num_units(text)


@given(TEXT)
def test_dominant_line_ending_matches_the_counter(text: str) -> None:
    assert dominant_line_ending(text) == reference_ending(text)
    assert dominant_line_ending(text, "x") == reference_ending(text, "x")
