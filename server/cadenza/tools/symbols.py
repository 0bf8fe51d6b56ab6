"""Finding the symbol a model names on a line: the column it would otherwise have to count.

The code-intelligence tools take ``(path, line, symbol)``: what a model sees in a file. The
column is computed here, in the text Cadenza reads (the editor's buffer, else the disk), as the
start of ``symbol`` as a whole word on that line. Small models miscount lines: a symbol that is
not on the line but on exactly one other line of the file is taken from there (the result says
so); one on several other lines is an error naming them, nearest first, so the model can pick.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cadenza.tools.base import ToolError
from cadenza.tools.textfile import LINE_BREAK

NEARBY_LINES = 5
"""How many other lines holding the symbol an error names."""

IDENTIFIER = re.compile(r"[^\W\d]\w*|\$\w*")
"""A name in the languages served (Python, JavaScript/TypeScript: ``$`` too)."""


@dataclass(frozen=True, kw_only=True)
class SymbolPosition:
    """Where the symbol starts: 0-based line, code-point column; ``columns``: every start.

    ``note``: set when the symbol was taken from another line than the one asked for.
    """

    line: int
    character: int
    columns: tuple[int, ...]
    note: str = ""


def _pattern(symbol: str) -> re.Pattern[str]:
    """``symbol`` as a whole word (not inside a longer name)."""
    return re.compile(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])")


def lines_using(text: str, name: str) -> list[int]:
    """The 1-based lines of ``text`` that hold ``name`` as a whole word."""
    pattern = _pattern(name)
    return [i + 1 for i, line in enumerate(LINE_BREAK.split(text)) if pattern.search(line)]


def symbol_name(raw: str) -> str:
    """The name to look for: ``raw`` stripped; a dotted or called form's last name.

    Small models write ``Cart.total`` or ``calc_total()`` for the method or function; the
    position of its last name is what a language server needs.
    """
    name = raw.strip().removesuffix("()").strip()
    if IDENTIFIER.fullmatch(name):
        return name
    parts = [p for p in re.split(r"[.:\s]+", name) if p]
    if parts and IDENTIFIER.fullmatch(parts[-1]):
        return parts[-1]
    raise ToolError(f"{raw!r} is not a name; give the identifier as it appears in the file")


def locate(text: str, line: int, symbol: str, file_name: str) -> SymbolPosition:
    """The position of ``symbol`` on the 1-based ``line`` of ``text`` (``file_name``'s).

    When ``symbol`` is not on ``line`` but on exactly one line of the file, that line is used:
    the file holds no other place the model could have meant.

    Raises:
        ToolError: The line is not in the file, or ``symbol`` is on none or several other lines
            (the message names the lines where it occurs, nearest first).
    """
    name = symbol_name(symbol)
    lines = LINE_BREAK.split(text)
    if line < 1 or line > len(lines):
        count = f"{len(lines)} line" if len(lines) == 1 else f"{len(lines)} lines"
        raise ToolError(f"{file_name} has {count}; line {line} is not in it")
    pattern = _pattern(name)
    columns = tuple(m.start() for m in pattern.finditer(lines[line - 1]))
    if columns:
        return SymbolPosition(line=line - 1, character=columns[0], columns=columns)
    found = [i + 1 for i, text_line in enumerate(lines) if pattern.search(text_line)]
    if not found:
        raise ToolError(f"`{name}` does not occur in {file_name}; check the name and the file")
    if len(found) == 1:
        only = found[0]
        columns = tuple(m.start() for m in pattern.finditer(lines[only - 1]))
        note = f"(`{name}` is on line {only} of {file_name}, not line {line}: used line {only})"
        return SymbolPosition(line=only - 1, character=columns[0], columns=columns, note=note)
    nearest = sorted(found, key=lambda n: (abs(n - line), n))[:NEARBY_LINES]
    where = ", ".join(str(n) for n in sorted(nearest))
    more = f" (and {len(found) - len(nearest)} more)" if len(found) > len(nearest) else ""
    raise ToolError(
        f"`{name}` is not on line {line} of {file_name}; it occurs on line(s) {where}{more}. "
        "Call again with one of those lines"
    )


def line_text(text: str, line: int) -> str:
    """The 0-based ``line`` of ``text`` (``""`` past its end)."""
    lines = LINE_BREAK.split(text)
    return lines[line] if 0 <= line < len(lines) else ""
