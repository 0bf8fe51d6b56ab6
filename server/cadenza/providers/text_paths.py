"""Path lines of the text edit format: the line before a fenced block that names its file.

A small model decorates it (a heading, a bullet, bold, backticks, a ``File:`` label, a note in
parentheses), so the decoration is read past; prose is not a path.
"""

from __future__ import annotations

import re

MAX_PATH_CHARS = 250
MAX_LINE_CHARS = 2 * MAX_PATH_CHARS
"""The longest line read as a path line (the path and its decoration). The note pattern
backtracks on a long run of spaces: 16,000 of them held it for 10 s."""
_LABEL = re.compile(r"^(?:file(?:name)?|path)\s*:\s*", re.IGNORECASE)
_BULLET = re.compile(r"^(?:[-+*]|\d{1,2}[.)])\s+")
_PATH = re.compile(r"^[\w.~@+\-/\\]+$")
_NOTE = re.compile(r"(?<=\S)\s+\([^()]*\)\s*:?\s*$")


def path_before(lines: list[str], index: int) -> str | None:
    """The path named by the line before ``index`` (blank lines between are skipped)."""
    named = path_index(lines, index)
    return None if named is None else path_line(lines[named])


def path_index(lines: list[str], index: int) -> int | None:
    """The index of the line before ``index`` when it names a path (``path_before``)."""
    i = index - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i < 0 or index - i > 3 or path_line(lines[i]) is None:
        return None
    return i


def path_line(line: str) -> str | None:
    """The path a line names when it holds only a path (and Markdown decoration), else None.

    Decoration: a heading's ``#``, a list bullet, bold or italic marks, backticks, quotes, a
    ``File:`` label, a trailing colon, and a note in parentheses after the path
    (``text.py (lines 1-7 of 7)``, as a read shows a part of a file). A bare word needs a
    ``.`` or ``/`` to count as a path (a prose line ending in a colon does not); a path with
    spaces, backticks around it.
    """
    if len(line) > MAX_LINE_CHARS:  # before the patterns: a long line is never a path's
        return None
    text = line.strip().lstrip("#").strip()
    text = _BULLET.sub("", text)
    text = _NOTE.sub("", text)
    text = text.strip("* ").rstrip(":").strip("* ")
    text = _LABEL.sub("", text).strip("* ")
    quoted = len(text) > 2 and text[0] == text[-1] and text[0] in "`'\""
    if quoted:
        text = text[1:-1].strip()
    text = text.rstrip(":").strip()
    if not text or len(text) > MAX_PATH_CHARS or "://" in text:
        return None
    if quoted and "`" not in text and "\n" not in text and text.strip("./"):
        return text.removeprefix("./")
    if not looks_like_path(text):
        return None
    return text.removeprefix("./")


def looks_like_path(word: str) -> bool:
    """A word without spaces, with a ``.`` or ``/`` and a letter or digit, not an ellipsis."""
    if not _PATH.match(word) or not ("." in word or "/" in word):
        return False
    stem = word.strip("./\\")
    if not stem or not any(c.isalnum() for c in stem) or word.endswith("."):
        return False
    return "/" in word or not word.rsplit(".", 1)[-1].isdigit()  # not a version: 3.11


def fence_info(info: str) -> tuple[str, str | None]:
    """A fence's language and the path its info string names (``python:src/a.py``), if any."""
    words = [w for w in re.split(r"[\s:]+", info) if w]
    if not words:
        return "", None
    language = words[0].lower()
    named = [w for w in words if ("." in w or "/" in w) and looks_like_path(w)]
    return language, (named[-1].strip("'\"") if named else None)
