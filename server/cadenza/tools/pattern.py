r"""The model's ``search`` pattern, matched line by line, in bounded time.

Models often pass code as the pattern (``len(x) - 1``, ``a[0]``): a line that holds the
pattern literally matches too, and a pattern that is no valid regex is literal.

The pattern is the model's, so it may backtrack for ever (``(a|aa)+$b`` over a long line).
It runs under the ``regex`` module, which releases the GIL while it matches (``re`` holds it:
a worker thread stuck in ``re`` froze the event loop as well) and takes a timeout; a whole
search may spend ``MAX_PATTERN_S`` matching. A timeout costs ``regex`` some microseconds a
call, too much for every line of a workspace, so a file is scanned whole, one call per line
where a match starts: the pattern, in multi-line mode, is searched from the start of a line;
a match that runs past its line is checked on that line alone; the scan goes on at the next
line. A pattern whose matches depend on what lies outside their line (``\A``, ``\Z``,
lookarounds, flags switched off inline, conditionals) could be missed by such a scan: it is
tried on each line alone instead.

Lines are split at ``\n``, ``\r\n`` and ``\r``, as ``read_file`` numbers them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import regex  # type: ignore[import-untyped]

from cadenza.tools.base import ToolError

MAX_PATTERN_S = 10.0
"""Seconds a search pattern may spend matching, all files together."""

_CONTEXT = re.compile(r"\\[AZzG]|\(\?<?[=!]|\(\?[a-zA-Z]*[-^]|\(\?\(")
"""Constructs whose match depends on text outside the line: anchors of the whole string,
lookarounds, inline flags switched off, conditionals (a backslash before them included, to
be safe)."""


class LinePattern:
    """A search pattern; ``lines`` yields the lines of a text it matches.

    Args:
        pattern: The model's pattern (a regular expression, or literal text).
    """

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.deadline = time.monotonic() + MAX_PATTERN_S
        self._line: Any = None
        self._scan: Any = None
        if re.escape(pattern) == pattern:
            return  # plain text (an identifier, mostly): the literal test is the whole match
        try:
            self._line = regex.compile(pattern)
            if not _CONTEXT.search(pattern):
                self._scan = regex.compile(pattern, regex.MULTILINE)
        except (regex.error, ValueError, OverflowError, TypeError):
            self._line = self._scan = None

    def lines(self, text: str) -> Iterator[tuple[int, str]]:
        """``(number, line)`` of each line of ``text`` that matches, 1-based, in order.

        Raises:
            ToolError: Matching took longer than ``MAX_PATTERN_S`` (this search so far).
        """
        flat = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = flat.split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # a final line break ends the last line; it starts none
        if self._line is None:
            found: set[int] = set()
        elif self._scan is None:
            found = {n for n, line in enumerate(lines) if self._matches(self._line, line)}
        else:
            found = self._scanned(flat, lines)
        found |= {n for n, line in enumerate(lines) if self.text in line}
        for n in sorted(found):
            yield n + 1, lines[n]

    def _scanned(self, flat: str, lines: list[str]) -> set[int]:
        """The lines that match, found by scanning ``flat`` whole (see the module)."""
        found: set[int] = set()
        pos = n = 0  # pos: where line n starts
        while n < len(lines):
            match = self._search(self._scan, flat, pos)
            if match is None:
                break
            n += flat.count("\n", pos, match.start())  # the line the match starts in
            if n >= len(lines):
                break
            end = flat.find("\n", match.start())
            end = len(flat) if end < 0 else end
            # A match inside its line is the line's own; one running past it is checked alone.
            if match.end() <= end or self._matches(self._line, lines[n]):
                found.add(n)
            n, pos = n + 1, end + 1
        return found

    def _matches(self, compiled: Any, line: str) -> bool:
        return self._search(compiled, line, 0) is not None

    def _search(self, compiled: Any, text: str, pos: int) -> Any:
        try:
            return compiled.search(text, pos, timeout=max(self.deadline - time.monotonic(), 1e-3))
        except TimeoutError:
            raise ToolError(
                f"the pattern took longer than {MAX_PATTERN_S:g} s to match; search for plain "
                "text or a simpler pattern"
            ) from None
