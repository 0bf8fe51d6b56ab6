r"""LSP lines, positions in client units, and minimal ``TextEdit``s from one text to another.

Rules, from LSP 3.17:

- §Text Documents / Position: a line ends at ``\n``, ``\r\n`` or ``\r`` (and nothing else:
  not the ``\x0b``, ``\x0c``, ``\x1c``-``\x1e``, ``\x85``, ``\u2028``, ``\u2029`` that
  Python's ``str.splitlines`` also splits on); ``character`` counts code units of the
  negotiated ``positionEncoding`` (§positionEncodings: UTF-16 by default, or UTF-8 bytes, or
  UTF-32 code points). Python strings index code points, so every column goes through
  pygls's ``PositionCodec``.
- A position between the ``\r`` and ``\n`` of a CRLF is not addressable, so edit ranges are
  widened to never split a CRLF.
- §TextEdit: the edits of one ``TextDocumentEdit`` all refer to the document before any of
  them and never overlap. ``minimal_replacements`` sends only the changed spans: the common
  prefix and suffix are left alone, and a change in several places becomes several edits
  (a line diff, each hunk trimmed to the characters that differ), so cursors, folds and undo
  in the editor stay where the person left them.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.host.ports import changed_line_spans, line_end, line_start, lines_with_ends
from cadenza.textio import changed_span


def split_lines(text: str) -> list[str]:
    """Split ``text`` into LSP lines, each keeping its terminator.

    Returns:
        At least one line; text ending in a terminator gets a final empty line, so every
        offset from 0 to ``len(text)`` has a line.
    """
    lines = lines_with_ends(text)  # one regex findall: C speed, no loop per line in Python
    if not lines or lines[-1][-1] in "\r\n":
        lines.append("")
    return lines


class LineIndex:
    """Code-point offsets ↔ LSP positions of one text.

    Positions are found by counting line breaks with ``str.count`` and finding the line's start
    with ``rfind`` (C speed, no per-line objects): splitting a 10 MB text into lines for two
    positions took ~150 ms (docs/lab/performance.md). Offsets asked in increasing order (an
    edit's start, then its end) count only the text between them.

    Args:
        text: The document text (code points, no BOM).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self._mark = (0, 0)  # (offset, its line): counting resumes here for later offsets

    def _line_of(self, offset: int) -> int:
        """Line breaks (LF, CRLF, CR) that end before ``offset``."""
        base, line = self._mark if self._mark[0] <= offset else (0, 0)
        text = self.text
        breaks = (
            text.count("\n", base, offset)
            + text.count("\r", base, offset)
            - text.count("\r\n", base, offset)
        )
        return line + breaks

    def position(self, offset: int, codec: PositionCodec) -> types.Position:
        """The LSP position of a code-point ``offset``.

        Args:
            offset: Code points from the start, 0 to ``len(text)``.
            codec: The negotiated encoding's codec (``character`` in its code units).

        Raises:
            ValueError: ``offset`` is outside the text or between the two characters of a CRLF.
        """
        if not 0 <= offset <= self.length:
            raise ValueError(f"offset {offset} is outside the text (0-{self.length})")
        number = self._line_of(offset)
        if _splits_crlf(self.text, offset):
            raise ValueError(f"offset {offset} splits the CRLF ending line {number}")
        self._mark = (offset, number)
        start = line_start(self.text, offset)
        return types.Position(line=number, character=client_units(self.text[start:offset], codec))


def client_units(text: str, codec: PositionCodec) -> int:
    """The length of ``text`` in the code units of ``codec``'s encoding.

    The standard encodings are counted by encoding the text at once (C speed); pygls counts
    character by character, ~110 ms for a line of 500,000 astral characters in UTF-16.
    """
    if text.isascii():
        return len(text)
    encoding = codec.encoding
    if encoding == types.PositionEncodingKind.Utf16:
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    units: int = codec.client_num_units(text)
    return units


def offset_to_position(lines: list[str], offset: int, codec: PositionCodec) -> types.Position:
    """The LSP position of a code-point ``offset`` into ``"".join(lines)``.

    Raises:
        ValueError: ``offset`` is outside the text or splits a CRLF.
    """
    return LineIndex("".join(lines)).position(offset, codec)


@dataclass(frozen=True, kw_only=True)
class Replacement:
    """Replace ``old[start:end]`` (code points) by ``text``."""

    start: int
    end: int
    text: str


def _splits_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


def _trimmed(old: str, new: str, base: int, old_span: str, new_span: str) -> Replacement:
    r"""The replacement of ``old_span`` (at ``base`` in ``old``) by ``new_span``, trimmed.

    Common characters at both ends are dropped; a boundary left between the ``\r`` and ``\n``
    of a CRLF in ``old`` is moved out by one (the character is common to both sides).
    """
    prefix, old_end, new_end = changed_span(old_span, new_span)
    start, end = base + prefix, base + old_end
    text = new_span[prefix:new_end]
    if _splits_crlf(old, start):
        start -= 1
        text = "\r" + text
    if _splits_crlf(old, end):
        end += 1
        text += "\n"
    return Replacement(start=start, end=end, text=text)


def minimal_replacement(old: str, new: str) -> Replacement:
    """The smallest single replacement turning ``old`` into ``new`` (prefix/suffix kept)."""
    return _trimmed(old, new, 0, old, new)


def minimal_replacements(old: str, new: str) -> list[Replacement]:
    """Non-overlapping replacements on ``old``, in order, that together give ``new``.

    The changed middle (after the common prefix and suffix), widened to whole lines, is split
    into hunks by a line diff; each hunk is trimmed to the characters that differ. No range
    splits a CRLF. The line diff (``linediff.changed_line_spans``) has no size limit: a change of a
    few lines in a file of any length gives edits of a few lines (a replacement spanning the
    lines between two distant changes loses the editor's cursors, folds and undo steps there).
    """
    if old == new:
        return []
    whole = minimal_replacement(old, new)
    start = line_start(old, whole.start)
    end = line_end(old, whole.end)
    # The widening only takes in common text: the same on both sides.
    new_start, new_end = start, whole.start + len(whole.text) + (end - whole.end)
    old_mid, new_mid = old[start:end], new[new_start:new_end]
    return [
        _trimmed(old, new, start + a1, old_mid[a1:a2], new_mid[b1:b2])
        for a1, a2, b1, b2 in changed_line_spans(old_mid, new_mid)
    ]


def text_edits(
    old: str, new: str, codec: PositionCodec, annotation_id: str | None = None
) -> list[types.TextEdit | types.AnnotatedTextEdit]:
    """``TextEdit``s on ``old`` that yield ``new``, positions in ``codec``'s code units.

    Args:
        old: The document's text now (code points, no BOM).
        new: The text wanted.
        codec: The negotiated position encoding.
        annotation_id: When set, ``AnnotatedTextEdit``s referring to that annotation.
    """
    index = LineIndex(old)
    edits: list[types.TextEdit | types.AnnotatedTextEdit] = []
    for change in minimal_replacements(old, new):
        range_ = types.Range(
            start=index.position(change.start, codec), end=index.position(change.end, codec)
        )
        if annotation_id is None:
            edits.append(types.TextEdit(range=range_, new_text=change.text))
        else:
            edits.append(
                types.AnnotatedTextEdit(
                    range=range_, new_text=change.text, annotation_id=annotation_id
                )
            )
    return edits
