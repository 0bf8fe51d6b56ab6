r"""An edit as its changed lines with a few unchanged lines around: what ``file_edited`` carries.

A change of a large file used to be published and recorded with both whole texts: for a 10 MB
file, 20 MB JSON-encoded for the client's update and again for the transcript, three quarters
of the server's work per edit (docs/lab/performance.md). A hunk carries the changed lines
and up to ``CONTEXT_LINES`` unchanged ones on each side (as ``diff -U3``); hunks whose contexts
would touch are one hunk.

The changed region is found as in ``lsp.edits.minimal_replacements``: the common prefix and
suffix with ``textio.changed_span`` (slice comparisons at C speed), then the line diff of the
middle (``linediff.changed_line_spans``: hunks as small as the change, in time that grows with
the change). Lines are LSP's (ended by ``\n``, ``\r\n`` or ``\r``); a hunk never starts or ends
between the two characters of a CRLF, in either text.
"""

from __future__ import annotations

from dataclasses import dataclass

from cadenza.textio import changed_span
from cadenza.tools.linediff import changed_line_spans
from cadenza.tools.textfile import LINE_BREAK, line_end, line_start

CONTEXT_LINES = 3
"""Unchanged lines kept before and after each change (as ``diff -U3``)."""


@dataclass(frozen=True, kw_only=True)
class TextHunk:
    r"""``old_text`` (lines of the old text from line ``old_line``) became ``new_text``.

    Both start at a line start; lines are 0-based and LSP's (``\n``, ``\r\n``, ``\r``).
    ``new_text`` starts at line ``new_line`` of the new text.
    """

    old_line: int
    new_line: int
    old_text: str
    new_text: str


def text_hunks(old: str, new: str, context: int = CONTEXT_LINES) -> list[TextHunk]:
    """The hunks that turn ``old`` into ``new``, in order; none when they are equal.

    Replacing each hunk's ``old_text`` (at its ``old_line``) by its ``new_text`` gives ``new``.
    """
    if old == new:
        return []
    start, old_end, new_end = _changed_lines(old, new)
    spans = [
        (start + a1, start + a2, start + b1, start + b2)
        for a1, a2, b1, b2 in changed_line_spans(old[start:old_end], new[start:new_end])
    ]
    hunks: list[TextHunk] = []
    old_at = new_at = old_line = new_line = 0  # line counts up to old_at / new_at
    hi = 0
    for a1, a2, b1, b2 in _grouped(old, spans, context):
        lo = _back(old, a1, context, floor=hi)
        hi = _ahead(old, a2, context)
        old_lo, new_lo, old_hi, new_hi = lo, b1 - (a1 - lo), hi, b2 + (hi - a2)
        old_line += _breaks(old, old_at, old_lo)
        new_line += _breaks(new, new_at, new_lo)
        old_at, new_at = old_lo, new_lo
        hunks.append(
            TextHunk(
                old_line=old_line,
                new_line=new_line,
                old_text=old[old_lo:old_hi],
                new_text=new[new_lo:new_hi],
            )
        )
    return hunks


def _changed_lines(old: str, new: str) -> tuple[int, int, int]:
    r"""``(start, old_end, new_end)``: the changed region widened to whole lines of both texts.

    ``old[:start] == new[:start]`` and ``old[old_end:] == new[new_end:]``; each bound is a line
    boundary in both texts (never between the ``\r`` and ``\n`` of a CRLF).
    """
    prefix, old_end, new_end = changed_span(old, new)
    start = line_start(old, prefix)
    if _splits_crlf(old, start) or _splits_crlf(new, start):
        start = line_start(old, start - 1)  # the CR ends the common prefix: its line too
    end = line_end(old, old_end)
    new_end += end - old_end
    if end == old_end and line_end(new, new_end) != new_end:
        # A boundary in the old text only (text inserted before a break, ``\r`` → ``a\r``):
        # the common suffix up to the new text's next break comes in too.
        widened = line_end(new, new_end)
        end, new_end = end + widened - new_end, widened
    if _splits_crlf(old, end) or _splits_crlf(new, new_end):
        end, new_end = end + 1, new_end + 1  # the LF is common: take it in
    return start, end, new_end


def _grouped(
    old: str, spans: list[tuple[int, int, int, int]], context: int
) -> list[tuple[int, int, int, int]]:
    """``spans`` with those at most ``2 * context`` lines apart joined (their contexts touch)."""
    out: list[tuple[int, int, int, int]] = []
    for span in spans:
        if out and _ahead(old, out[-1][1], 2 * context, ceiling=span[0]) >= span[0]:
            a1, _, b1, _ = out[-1]
            out[-1] = (a1, span[1], b1, span[3])
        else:
            out.append(span)
    return out


def _breaks(text: str, lo: int, hi: int) -> int:
    """The line breaks in ``text[lo:hi]`` (bounds not inside a CRLF), counted at C speed.

    CRLFs are counted only when there is a CR: a two-character count is several times slower.
    """
    crs = text.count("\r", lo, hi)
    return text.count("\n", lo, hi) + crs - (text.count("\r\n", lo, hi) if crs else 0)


def _splits_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


def _back(text: str, pos: int, lines: int, floor: int) -> int:
    """The start of the line ``lines`` lines before the line starting at ``pos``, >= ``floor``."""
    for _ in range(lines):
        if pos <= floor:
            return floor
        pos = line_start(text, pos - (2 if text[pos - 2 : pos] == "\r\n" else 1))
    return max(pos, floor)


def _ahead(text: str, pos: int, lines: int, ceiling: int | None = None) -> int:
    """The line boundary ``lines`` lines after ``pos`` (a boundary), not past ``ceiling``."""
    limit = len(text) if ceiling is None else ceiling
    for _ in range(lines):
        if pos >= limit:
            return limit
        match = LINE_BREAK.search(text, pos)
        pos = match.end() if match else len(text)
    return min(pos, limit)
