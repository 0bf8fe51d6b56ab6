"""``read_file``'s line counting and lazy lines agree with ``lines_with_ends`` on any text."""

from __future__ import annotations

import random

import pytest

from cadenza.tools.base import ToolError
from cadenza.tools.read import _lines, line_count, render_lines
from cadenza.tools.textfile import lines_with_ends

PIECES = ["a", "bc", " ", "\n", "\r", "\r\n", "\n\r", "\f", "\u2028", "\x1c", "é", "\U0001f600"]


def _texts() -> list[str]:
    rng = random.Random(21)
    texts = ["", "\n", "\r", "\r\n", "x", "x\n", "x\r", "\n\n", "\r\r\n", "a\r\nb\rc\nd"]
    texts += ["".join(rng.choices(PIECES, k=rng.randint(1, 60))) for _ in range(2000)]
    return texts


def test_line_count_and_lines_match_lines_with_ends() -> None:
    for text in _texts():
        want = lines_with_ends(text)
        assert line_count(text) == len(want), repr(text)
        assert list(_lines(text)) == want, repr(text)


def test_render_lines_windows_match_a_full_split() -> None:
    for text in _texts()[:400]:
        lines = lines_with_ends(text)
        for offset in (1, 2, 5):
            if lines and offset > len(lines):
                with pytest.raises(ToolError):
                    render_lines("f", text, offset=offset, limit=3)
                continue
            shown = render_lines("f", text, offset=offset, limit=3)
            body = "".join(lines[offset - 1 : offset + 2])
            header = f"f (lines {offset}-" if lines else "f (empty)"
            assert shown.startswith(header), repr(text)
            assert shown.split("\n", 1)[1].startswith(body) or not body, repr(text)
