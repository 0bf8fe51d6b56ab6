r"""Line endings, exactly: lines split by the LSP rules, endings carried through edits.

Lines are split by the LSP rules (``\n``, ``\r\n``, ``\r``; LSP 3.17 §Text Documents), never
by ``str.splitlines``. ``carry_line_endings`` gives the lines of a replacement the endings of
the lines they replace, and new lines the file's dominant ending, whatever endings the model
typed, so an edit never changes the endings of lines it does not touch. Bytes
and encodings are ``cadenza.textio``'s.
"""

from __future__ import annotations

import re

from cadenza.tools.linediff import line_opcodes

LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""An LSP line terminator (LSP 3.17 §Text Documents, ``EOL``)."""
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def line_start(text: str, offset: int) -> int:
    """The offset where the line holding ``offset`` starts.

    The CR is looked for after the last LF only: in a file without CRs, ``rfind`` of one from
    ``offset`` would scan back to the start of the text, for every edit.
    """
    lf = text.rfind("\n", 0, offset)
    return max(lf, text.rfind("\r", lf + 1, offset)) + 1


def line_end(text: str, offset: int) -> int:
    """The smallest line boundary (after a terminator, or the end) at or after ``offset``."""
    if offset == 0 or offset == len(text) or text[offset - 1] in "\r\n":
        return offset
    match = LINE_BREAK.search(text, offset)
    return match.end() if match else len(text)


def lines_with_ends(text: str) -> list[str]:
    r"""``text`` split after each ``\r\n``, ``\r`` or ``\n`` only, breaks kept.

    Unlike ``str.splitlines`` a form feed, ``\x1c``-``\x1e`` or U+2028 does not end a line,
    so line numbers agree with editors (LSP counts these three breaks only).
    """
    return _LINE.findall(text)


def split_ending(text: str) -> list[tuple[str, str]]:
    """Split ``text`` into ``(content, ending)`` pairs by LSP line rules.

    The last pair has ending ``""`` (it is ``("", "")`` when the text ends with a line break).
    """
    pieces: list[tuple[str, str]] = []
    start = 0
    for match in LINE_BREAK.finditer(text):
        pieces.append((text[start : match.start()], match.group()))
        start = match.end()
    pieces.append((text[start:], ""))
    return pieces


_LONE_LF = re.compile(r"(?<!\r)\n")
_LONE_CR = re.compile(r"\r(?!\n)")


def dominant_line_ending(text: str, default: str = "\n") -> str:
    """The most frequent line ending of ``text`` (the first seen wins a tie), or ``default``."""
    if "\r" not in text:  # the usual case, decided without counting (10 MB: ~0.3 ms)
        return "\n" if "\n" in text else default
    # Counted with str.count (C speed); a regex scan into a Counter took ~100 ms for 10 MB.
    crlf = text.count("\r\n")
    counts = {"\r\n": crlf, "\n": text.count("\n") - crlf, "\r": text.count("\r") - crlf}
    most = max(counts.values())
    if most == 0:
        return default
    tied = [ending for ending, count in counts.items() if count == most]
    if len(tied) == 1:
        return tied[0]
    first = {"\r\n": text.find("\r\n")}
    for ending, pattern in (("\n", _LONE_LF), ("\r", _LONE_CR)):
        found = pattern.search(text)
        first[ending] = found.start() if found else len(text)
    return min(tied, key=lambda ending: first[ending])


def _pair_endings(
    old: list[tuple[str, str]], new: list[tuple[str, str]], default: str
) -> list[str]:
    """For each new line with a break: the ending of the old line it replaces, or ``default``.

    Lines equal at both ends pair up directly (cheap for whole-file rewrites); the middle is
    paired by a line diff of the contents (``linediff``, linear for a sparse change at any
    length, so a long file's lines are never paired by position past a distant change).
    """
    endings = [default if ending else "" for _, ending in new]

    def pair(i: int, j: int) -> None:
        if new[j][1] and old[i][1]:
            endings[j] = old[i][1]

    n, m = len(old), len(new)
    head = 0
    while head < min(n, m) and old[head][0] == new[head][0]:
        pair(head, head)
        head += 1
    tail = 0
    while tail < min(n, m) - head and old[n - 1 - tail][0] == new[m - 1 - tail][0]:
        pair(n - 1 - tail, m - 1 - tail)
        tail += 1
    old_mid, new_mid = old[head : n - tail], new[head : m - tail]
    for tag, i1, i2, j1, j2 in line_opcodes([c for c, _ in old_mid], [c for c, _ in new_mid]):
        if tag != "insert":
            for k in range(min(i2 - i1, j2 - j1)):
                pair(head + i1 + k, head + j1 + k)
    return endings


def carry_line_endings(old: str, new: str, default: str) -> str:
    r"""``new`` with line endings taken from ``old``, the text it replaces.

    Lines of ``new`` that correspond to lines of ``old`` (equal or replaced, paired by a line
    diff) keep the ending their old line had; every other line break becomes ``default``.
    The endings the model typed never matter, so an edit written with ``\n`` lands in a CRLF
    file with CRLF, and untouched lines of a mixed file keep their own endings.

    Args:
        old: The replaced text.
        new: The replacement as written.
        default: The ending of new lines, normally ``dominant_line_ending`` of the file.
    """
    new_pieces = split_ending(new)
    endings = _pair_endings(split_ending(old), new_pieces, default)
    return "".join(
        content + ending for (content, _), ending in zip(new_pieces, endings, strict=True)
    )
