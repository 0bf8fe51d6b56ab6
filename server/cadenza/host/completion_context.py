"""What an inline completion sees and where it stops: windows, extra chunks, stop rules.

Pure functions over text, no model and no editor: the service (``host.completions``) calls
them. Budgets are in tokens, estimated from characters (code runs about three characters per
token in the models Cadenza embeds): a real count would cost a round trip per keystroke.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

from cadenza.providers.infill import InfillChunk, InfillRequest

CHARS_PER_TOKEN = 3
"""Characters per token assumed by the budgets (low for code, so budgets are not overrun)."""
CHUNK_LINES = 32
"""Lines per extra chunk: the edit or view's line and the lines around it."""


@dataclass(frozen=True, kw_only=True)
class CompletionBudget:
    """How much text a completion request carries and generates.

    Attributes:
        prefix_tokens: Text before the cursor (whole lines, nearest first).
        suffix_tokens: Text after the cursor.
        extra_tokens: Chunks of other open documents, all together.
        line_tokens: Tokens generated for a single-line completion.
        block_tokens: Tokens generated for a block.
        max_predict_ms: Generation stops at the next new line after this long (ms).
        timeout_s: The whole request's limit, waiting for the server included (seconds).
    """

    prefix_tokens: int = 512
    suffix_tokens: int = 128
    extra_tokens: int = 384
    line_tokens: int = 32
    block_tokens: int = 96
    max_predict_ms: int = 400
    timeout_s: float = 4.0


@dataclass(frozen=True, kw_only=True)
class Cursor:
    """A document's text and a position in it (0-based line, column in code points)."""

    text: str
    line: int
    column: int


def split_at(cursor: Cursor) -> tuple[list[str], str, str, list[str]]:
    """The lines before the cursor's line, its text before and after the cursor, the rest."""
    lines = cursor.text.split("\n")
    line = min(max(cursor.line, 0), len(lines) - 1)
    current = lines[line]
    column = min(max(cursor.column, 0), len(current))
    return lines[:line], current[:column], current[column:], lines[line + 1 :]


def _take_lines(lines: list[str], budget_chars: int, *, from_end: bool) -> list[str]:
    """Whole lines nearest the cursor while they fit ``budget_chars`` (newlines counted)."""
    taken: list[str] = []
    used = 0
    for line in reversed(lines) if from_end else lines:
        used += len(line) + 1
        if used > budget_chars:
            break
        taken.append(line)
    return list(reversed(taken)) if from_end else taken


def is_single_line(after_cursor: str) -> bool:
    """A completion in the middle of a line ends with that line."""
    return bool(after_cursor.strip())


def infill_request(
    cursor: Cursor, extra: tuple[InfillChunk, ...], budget: CompletionBudget
) -> InfillRequest:
    """The ``/infill`` request for ``cursor`` within ``budget``.

    Mid-line (text after the cursor) the completion stops at the end of the line; at the end
    of a line it may be a block, ended by a blank line or a line indented less than the
    cursor's line.
    """
    before, line_head, line_tail, after = split_at(cursor)
    prefix_lines = _take_lines(before, budget.prefix_tokens * CHARS_PER_TOKEN, from_end=True)
    suffix_budget = budget.suffix_tokens * CHARS_PER_TOKEN - len(line_tail)
    suffix_lines = _take_lines(after, max(suffix_budget, 0), from_end=False)
    prefix = "".join(f"{line}\n" for line in prefix_lines)
    suffix = line_tail + "".join(f"\n{line}" for line in suffix_lines)
    single = is_single_line(line_tail)
    return InfillRequest(
        prefix=prefix,
        prompt=line_head,
        suffix=suffix,
        extra=extra,
        n_predict=budget.line_tokens if single else budget.block_tokens,
        t_max_predict_ms=budget.max_predict_ms,
        stop=("\n",) if single else ("\n\n",),
        n_indent=0 if single else indentation(line_head),
        timeout_s=budget.timeout_s,
    )


def indentation(line: str) -> int:
    """Leading spaces and tabs of ``line``."""
    return len(line) - len(line.lstrip(" \t"))


def trim_completion(text: str, cursor: Cursor) -> str:
    """``text`` cut by the stop rules, the server's output checked again.

    Single-line: up to the first newline, without a tail that repeats the rest of the line.
    Block: up to a blank line or the first line indented less than the cursor's line.
    Trailing whitespace is dropped; text that only repeats what follows the cursor is empty.
    """
    _, line_head, line_tail, after = split_at(cursor)
    if is_single_line(line_tail):
        text = text.split("\n", 1)[0]
        tail = line_tail.rstrip()
        if tail and text.endswith(tail):
            text = text[: -len(tail)]
        return text.rstrip()
    floor = indentation(line_head)
    kept: list[str] = []
    for number, line in enumerate(text.split("\n")):
        if number > 0 and (not line.strip() or indentation(line) < floor):
            break
        kept.append(line)
    result = "\n".join(kept).rstrip()
    following = "\n".join([line_tail, *after]).strip()
    if result.strip() and following.startswith(result.strip()):
        return ""
    return result


class RecentChunks:
    """A small ring of recently edited or viewed pieces of open documents.

    Args:
        size: Chunks kept; the oldest falls out.
    """

    def __init__(self, size: int = 8) -> None:
        self._chunks: collections.deque[tuple[str, int, InfillChunk]] = collections.deque(
            maxlen=size
        )

    def note(self, uri: str, filename: str, text: str, line: int) -> None:
        """Remember the lines of ``text`` around ``line``; replaces an overlapping chunk."""
        lines = text.split("\n")
        start = max(0, min(line, len(lines) - 1) - CHUNK_LINES // 2)
        piece = "\n".join(lines[start : start + CHUNK_LINES])
        if not piece.strip():
            return
        for entry in list(self._chunks):
            entry_uri, entry_start, _ = entry
            if entry_uri == uri and abs(entry_start - start) < CHUNK_LINES:
                self._chunks.remove(entry)
        self._chunks.append((uri, start, InfillChunk(filename=filename, text=piece)))

    def forget(self, uri: str) -> None:
        """Drop the chunks of a closed document."""
        for entry in [e for e in self._chunks if e[0] == uri]:
            self._chunks.remove(entry)

    def extra_for(self, uri: str, budget_tokens: int) -> tuple[InfillChunk, ...]:
        """Chunks of other documents, newest first chosen, oldest first returned (budgeted)."""
        chosen: list[InfillChunk] = []
        used = 0
        for entry_uri, _, chunk in reversed(self._chunks):
            if entry_uri == uri:
                continue
            used += len(chunk.text) + len(chunk.filename)
            if used > budget_tokens * CHARS_PER_TOKEN:
                break
            chosen.append(chunk)
        return tuple(reversed(chosen))
