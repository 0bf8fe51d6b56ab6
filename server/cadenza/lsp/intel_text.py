r"""Positions and edits between the editor's language servers and the texts Cadenza reads.

The ``CodeIntel`` port speaks 0-based lines and code-point columns; the editor speaks LSP
``Position``s whose ``character`` counts code units of the negotiated ``positionEncoding``
(UTF-16 by default). Lines end at ``\n``, ``\r\n`` or ``\r`` only (LSP 3.17 §Text
Documents), so lines are split with ``textfile.split_ending``, never ``str.splitlines``.

Conversions to client units go through ``edits.client_units`` (the LSP face's counter);
conversions back go through pygls's ``PositionCodec`` and are checked by converting back, as
the headless client does: a position past the end of a line or inside a UTF-16 surrogate
pair was computed on another text. Such a position is clamped for a reported location and
refused for an edit, which would otherwise land in the wrong place.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.host.ports import split_ending
from cadenza.lsp.edits import client_units


class PositionError(ValueError):
    """A position that does not exist in the text (the message says why)."""


def _lines(count: int) -> str:
    """``1 line``, ``7 lines``."""
    return f"{count} line" if count == 1 else f"{count} lines"


class FileText:
    """One file's text with its LSP lines, converting positions in both directions.

    Args:
        text: The text (code points, line endings as they are).
        codec: The negotiated encoding's codec.
    """

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text = text
        self.codec = codec
        pieces = split_ending(text)
        self.lines = [content for content, _ in pieces]
        self.starts = list(itertools.accumulate((len(c) + len(e) for c, e in pieces), initial=0))

    def to_client(self, line: int, character: int) -> types.Position:
        """The LSP position of a code-point position.

        Raises:
            PositionError: The line does not exist or the column is past its end.
        """
        if not 0 <= line < len(self.lines):
            raise PositionError(f"line {line + 1} does not exist ({_lines(len(self.lines))})")
        content = self.lines[line]
        if not 0 <= character <= len(content):
            raise PositionError(f"column {character} is past the end of line {line + 1}")
        return types.Position(line=line, character=client_units(content[:character], self.codec))

    def from_client(self, position: types.Position, *, clamp: bool) -> tuple[int, int]:
        """The ``(line, code-point column)`` of an LSP position.

        Args:
            position: Line and character in client units.
            clamp: Move a position past the end of its line (or of the text) to that end
                instead of refusing it (LSP 3.17 §Position allows clients to clamp).

        Raises:
            PositionError: Only when ``clamp`` is False: the position does not exist, or it
                falls inside a character (a UTF-16 surrogate pair, a UTF-8 sequence).
        """
        line, character = position.line, position.character
        if line < 0 or character < 0:
            raise PositionError(f"negative position {line}:{character}")
        if line >= len(self.lines):
            if not clamp:
                raise PositionError(f"line {line + 1} is past the end ({_lines(len(self.lines))})")
            return len(self.lines) - 1, len(self.lines[-1])
        content = self.lines[line]
        units = client_units(content, self.codec)
        if character > units:
            if not clamp:
                raise PositionError(f"character {character} is past the end of line {line}")
            return line, len(content)
        # A fresh Position: pygls's codec may rewrite the ``character`` of the one it gets.
        point = self.codec.position_from_client_units([content], types.Position(0, character))
        if not clamp and client_units(content[: point.character], self.codec) != character:
            raise PositionError(f"position {line}:{character} falls inside a character")
        return line, point.character

    def offset(self, position: types.Position) -> int:
        """The code-point offset of an LSP position (strict: never clamped).

        Raises:
            PositionError: See ``from_client``.
        """
        line, character = self.from_client(position, clamp=False)
        return self.starts[line] + character


def apply_text_edits(
    text: FileText, edits: Sequence[types.TextEdit | types.AnnotatedTextEdit]
) -> str:
    """Apply edits that all refer to ``text`` (LSP 3.17 §TextEdit), from the last to the first.

    Inserts at one position keep their array order in the result.

    Returns:
        The new text.

    Raises:
        PositionError: A range does not exist in the text, is reversed, or two ranges overlap.
    """
    spans: list[tuple[int, int, int, str]] = []
    for index, edit in enumerate(edits):
        start, end = text.offset(edit.range.start), text.offset(edit.range.end)
        if end < start:
            raise PositionError("an edit's range ends before it starts")
        spans.append((start, end, index, edit.new_text))
    spans.sort()
    for (_, end, _, _), (start, _, _, _) in itertools.pairwise(spans):
        if start < end:
            raise PositionError("two edits overlap")
    result = text.text
    for start, end, _, new_text in reversed(spans):
        result = result[:start] + new_text + result[end:]
    return result
