"""What an inline completion sees and where it stops: windows, extra chunks, stop rules.

Functions over text, no model and no editor: the service (``host.completions``) calls them.
Budgets are in tokens, estimated from characters (code runs about three characters per token
in the models Cadenza embeds): a real count would cost a round trip per keystroke.

Everything sent is redacted (``cadenza.secrets``): the cursor's line over a margin wider than
what is kept, as one text, before it is cut to the budgets and split at the cursor; the lines
around it and each extra chunk as whole lines. A whole document is never redacted: over a
megabyte that takes seconds.
"""

from __future__ import annotations

import collections
import functools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from cadenza.providers.infill import InfillChunk, InfillRequest
from cadenza.secrets import redact_piece

CHARS_PER_TOKEN = 3
"""Characters per token assumed by the budgets (low for code, so budgets are not overrun)."""
CHUNK_LINES = 16
"""Lines per extra chunk: the edit or view's line and the lines around it (two or three fit
the extra budget)."""
SCAN_HEAD_LINES = 200
"""Lines at a document's top searched for names of other documents' chunks (its imports)."""
SCAN_AROUND_LINES = 400
"""Lines before and after the cursor searched for them too: a long document is never searched
whole (a regular expression over a megabyte takes a good part of a second)."""
REDACT_MARGIN_CHARS = 512
"""Characters of the cursor's line redacted beyond what the budgets keep, on each side: a
secret that starts in the margin is hidden whole before the cut (a registered key longer than
that loses its cut end too, ``secrets.redact_piece``)."""
EXTRA_REFRESH_S = 30.0
"""How long a document's extra chunks stay as chosen (seconds) unless one of their documents
closes: each new choice makes llama-server evaluate the whole prompt again."""


@dataclass(frozen=True, kw_only=True)
class CompletionBudget:
    """How much text a completion request carries and generates.

    Attributes:
        prefix_tokens: Text before the cursor (whole lines, nearest first).
        suffix_tokens: Text after the cursor.
        extra_tokens: Chunks of other open documents, all together.
        line_tokens: Tokens generated for a single-line completion.
        block_tokens: Tokens generated for a block.
        max_predict_ms: Generation stops at the next new line after this long (ms); counted by
            llama-server from the first token, so a cold prompt does not eat into it.
        timeout_s: The longest the model server may stay silent (seconds): a cold prompt of
            a thousand tokens takes seconds on a CPU and is waited for (a newer keystroke
            cancels it anyway); only a stuck or swamped server is given up on.
    """

    prefix_tokens: int = 512
    suffix_tokens: int = 128
    extra_tokens: int = 384
    line_tokens: int = 32
    block_tokens: int = 128
    max_predict_ms: int = 5000
    timeout_s: float = 60.0


@dataclass(frozen=True, kw_only=True)
class Cursor:
    """A document's text and a position in it (0-based line, column in code points)."""

    text: str
    line: int
    column: int

    @functools.cached_property
    def lines(self) -> list[str]:
        """The text's lines (split at each new line), split once for all a request builds."""
        return self.text.split("\n")


def split_at(cursor: Cursor) -> tuple[list[str], str, str, list[str]]:
    """The lines before the cursor's line, its text before and after the cursor, the rest."""
    lines = cursor.lines
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
    prefix_chars = budget.prefix_tokens * CHARS_PER_TOKEN
    suffix_chars = budget.suffix_tokens * CHARS_PER_TOKEN
    head, tail = line_parts(line_head, line_tail, prefix_chars, suffix_chars)
    prefix_lines = _take_lines(before, max(prefix_chars - len(head), 0), from_end=True)
    suffix_lines = _take_lines(after, max(suffix_chars - len(tail), 0), from_end=False)
    prefix = redact_piece(
        "".join(f"{line}\n" for line in prefix_lines),
        cut_before=len(prefix_lines) < len(before),
    )
    suffix = tail + redact_piece(
        "".join(f"\n{line}" for line in suffix_lines),
        cut_after=len(suffix_lines) < len(after),
    )
    single = is_single_line(line_tail)
    return InfillRequest(
        prefix=prefix,
        prompt=head,
        suffix=suffix,
        extra=extra,
        n_predict=budget.line_tokens if single else budget.block_tokens,
        t_max_predict_ms=budget.max_predict_ms,
        stop=("\n",) if single else ("\n\n",),
        n_indent=0 if single else indentation(line_head),
        timeout_s=budget.timeout_s,
    )


def line_parts(head: str, tail: str, head_chars: int, tail_chars: int) -> tuple[str, str]:
    """The cursor's line before and after the cursor, redacted, then cut to the budgets.

    A minified line of megabytes keeps ``head_chars`` before the cursor and ``tail_chars``
    after it. The kept text and ``REDACT_MARGIN_CHARS`` more on each side are redacted as one
    text before any cut, so a secret cut by a budget, or split by the cursor, is hidden whole;
    the result is that redacted text split where the cursor falls in it (before a secret the
    cursor stands in).
    """
    start = max(0, len(head) - head_chars - REDACT_MARGIN_CHARS)
    end = min(len(tail), tail_chars + REDACT_MARGIN_CHARS)
    cut_before, cut_after = start > 0, end < len(tail)
    head, tail = head[start:], tail[:end]
    whole = redact_piece(head + tail, cut_before=cut_before, cut_after=cut_after)
    alone = redact_piece(head, cut_before=cut_before)
    split = next(
        (at for at, (a, b) in enumerate(zip(alone, whole, strict=False)) if a != b),
        min(len(alone), len(whole)),
    )
    head, tail = whole[:split], whole[split:]
    return head[max(len(head) - head_chars, 0) :], tail[:tail_chars]


def indentation(line: str) -> int:
    """Leading spaces and tabs of ``line``."""
    return len(line) - len(line.lstrip(" \t"))


def trim_completion(text: str, cursor: Cursor) -> str:
    """``text`` cut by the stop rules, the server's output checked again.

    Single-line: up to the first newline, without a tail that repeats the rest of the line.
    Block: up to a blank line, the first line indented less than the cursor's line, or the
    first line that is the next line of the document (the model began to repeat what
    follows). Trailing whitespace is dropped; text that only repeats what follows the cursor
    is empty.
    """
    _, line_head, line_tail, after = split_at(cursor)
    if is_single_line(line_tail):
        text = text.split("\n", 1)[0]
        tail = line_tail.rstrip()
        if tail and text.endswith(tail):
            text = text[: -len(tail)]
        return text.rstrip()
    floor = indentation(line_head)
    next_line = next((line for line in after if line.strip()), None)
    kept: list[str] = []
    for number, line in enumerate(text.split("\n")):
        if number > 0 and (not line.strip() or indentation(line) < floor or line == next_line):
            break
        kept.append(line)
    result = "\n".join(kept).rstrip()
    following = "\n".join([line_tail, *after]).strip()
    if result.strip() and following.startswith(result.strip()):
        return ""
    return result


_DEFINITION = re.compile(
    r"\b(?:def|class|function|func|fn|struct|enum|trait|interface|type|module)\s+([A-Za-z_]\w*)"
    r"|^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)",
    re.MULTILINE,
)
"""A name a chunk defines: after a definition keyword, or assigned at the start of a line."""
_WORD = re.compile(r"[A-Za-z_]\w{2,}")
"""A name of three characters or more (shorter ones match everything)."""


def defined_names(text: str) -> set[str]:
    """Names ``text`` defines (functions, classes, types, top-level assignments), 3+ characters."""
    names = {a or b for a, b in _DEFINITION.findall(text)}
    return {name for name in names if len(name) >= 3}


@dataclass(frozen=True, kw_only=True)
class _Entry:
    uri: str
    start: int
    chunk: InfillChunk
    names: frozenset[str]


class RecentChunks:
    """A small ring of recently edited or viewed pieces of open documents.

    Args:
        size: Chunks kept; the oldest falls out.
        max_chars: The longest chunk kept (the extra budget: a longer one is never chosen).
    """

    def __init__(self, size: int = 8, max_chars: int = 4096) -> None:
        self._entries: collections.deque[_Entry] = collections.deque(maxlen=size)
        self.max_chars = max_chars

    def note(self, uri: str, filename: str, lines: Sequence[str], line: int) -> None:
        """Remember the ``lines`` of a document around ``line``; replaces an overlapping chunk.

        The chunk is kept redacted (``secrets.redact_piece``: lines before or after it were
        cut off); a chunk over ``max_chars`` is not kept, nor redacted (a minified line).
        """
        start = max(0, min(line, len(lines) - 1) - CHUNK_LINES // 2)
        piece = "\n".join(lines[start : start + CHUNK_LINES])
        if not piece.strip() or len(piece) + len(filename) > self.max_chars:
            return
        piece = redact_piece(
            piece, cut_before=start > 0, cut_after=start + CHUNK_LINES < len(lines)
        )
        for entry in list(self._entries):
            if entry.uri == uri and abs(entry.start - start) < CHUNK_LINES:
                self._entries.remove(entry)
        chunk = InfillChunk(filename=filename, text=piece)
        stem = PurePosixPath(filename).stem
        names = frozenset(defined_names(piece) | ({stem} if len(stem) >= 3 else set()))
        self._entries.append(_Entry(uri=uri, start=start, chunk=chunk, names=names))

    def forget(self, uri: str) -> None:
        """Drop the chunks of a closed document."""
        for entry in [e for e in self._entries if e.uri == uri]:
            self._entries.remove(entry)

    def related(
        self, uri: str, text: str, budget_tokens: int
    ) -> tuple[tuple[InfillChunk, ...], frozenset[str]]:
        """Chunks of other documents related to ``text``, and their documents (budgeted).

        A chunk is related when ``text`` uses a name it defines or names its file (an
        import). Newest first chosen, a chunk over what is left of the budget skipped;
        returned oldest first, so the newest sits nearest the prefix.
        """
        words = set(_WORD.findall(text))
        chosen: list[_Entry] = []
        left = budget_tokens * CHARS_PER_TOKEN
        for entry in reversed(self._entries):
            if entry.uri == uri or not entry.names & words:
                continue
            size = len(entry.chunk.text) + len(entry.chunk.filename)
            if size <= left:
                chosen.append(entry)
                left -= size
        chosen.reverse()
        return tuple(e.chunk for e in chosen), frozenset(e.uri for e in chosen)


@dataclass(frozen=True, kw_only=True)
class _Choice:
    chunks: tuple[InfillChunk, ...]
    sources: frozenset[str]
    at: float


class ExtraContext:
    """Each document's extra chunks, kept as chosen so llama-server's KV cache holds.

    The chunks come first in the model's prompt: when they change, everything after them is
    evaluated again, a cold prompt of seconds on a CPU. So a document's chunks are chosen at
    its first completion and chosen again only when one of their documents closes, or, at
    most every ``refresh_s``, when a new choice would differ. Each document keeps its own
    choice, so going back to one finds its prompt as llama-server last saw it.

    Args:
        ring: The recent chunks to choose from.
        refresh_s: See ``EXTRA_REFRESH_S``.
        clock: Seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        ring: RecentChunks,
        *,
        refresh_s: float = EXTRA_REFRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ring = ring
        self.refresh_s = refresh_s
        self._clock = clock
        self._choices: dict[str, _Choice] = {}

    def choose(self, uri: str, cursor: Cursor, budget_tokens: int) -> tuple[InfillChunk, ...]:
        """The extra chunks of a completion at ``cursor`` in document ``uri``.

        Related to the document's top and the lines around the cursor (``scanned_text``).
        """
        now = self._clock()
        kept = self._choices.get(uri)
        if kept is not None and now - kept.at < self.refresh_s:
            return kept.chunks
        chunks, sources = self.ring.related(uri, scanned_text(cursor), budget_tokens)
        self._choices[uri] = _Choice(chunks=chunks, sources=sources, at=now)
        return chunks

    def forget(self, uri: str) -> None:
        """A document closed: its chunks, its choice and the choices holding its chunks go."""
        self.ring.forget(uri)
        self._choices = {
            other: choice
            for other, choice in self._choices.items()
            if other != uri and uri not in choice.sources
        }


def scanned_text(cursor: Cursor) -> str:
    """The part of a document searched for related chunks: its top and the cursor's region.

    The first ``SCAN_HEAD_LINES`` (imports) and ``SCAN_AROUND_LINES`` before and after the
    cursor's line; a shorter document whole.
    """
    lines = cursor.lines
    if len(lines) <= SCAN_HEAD_LINES + 2 * SCAN_AROUND_LINES:
        return cursor.text
    start = max(SCAN_HEAD_LINES, cursor.line - SCAN_AROUND_LINES)
    region = lines[start : cursor.line + SCAN_AROUND_LINES + 1]
    return "\n".join([*lines[:SCAN_HEAD_LINES], *region])
