r"""Text from the server, the model or files, made safe to print on a terminal.

Model output can carry escape sequences that move the cursor, erase lines or clear the screen,
so that a diff or a message shows something other than what was written. :func:`visible`
shows every control character (C0 except ``\n`` and ``\t``, DEL, C1) and every bidi
override or isolate as visible text (``\x1b``, ``\u202e``); :func:`visible_line` shows line
breaks and tabs too, for one-line items such as file names; :func:`visible_markup` also
escapes rich markup, for strings that are put into a markup template, and
:func:`line_markup` does both for a one-line item put into one. :func:`printable`
drops those characters instead, for text printed as it is (a completion written to stdout).
:func:`shorten` cuts a long one-line item at a word, with an ellipsis, so that what is left
still reads.
"""

from __future__ import annotations

import re

from rich.markup import escape

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with each control character and bidi override replaced by its escaped form."""
    return _UNSAFE.sub(_shown, text)


def printable(text: str) -> str:
    r"""``text`` without the characters :func:`visible` escapes (``\n`` and ``\t`` stay)."""
    return _UNSAFE.sub("", text)


def visible_line(text: str) -> str:
    """:func:`visible`, and a line break or tab shown too: for a one-line item.

    A file name or a tool call's title must not start a line of its own (a forged summary or
    diff line).
    """
    return _UNSAFE_IN_LINE.sub(_shown, text)


def visible_markup(text: str) -> str:
    """:func:`visible`, then rich markup escaped: for text inserted into a markup string."""
    return escape(visible(text))


def line_markup(text: str) -> str:
    """:func:`visible_line`, then rich markup escaped: a path, name or title in a markup line."""
    return escape(visible_line(text))


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters: cut after a whole word, ending in ``…``.

    A cut inside a word (``exit co``) or just after an opening bracket reads as a bug. Only a
    word longer than half the limit (a path, a URL) is cut inside, so that something is left.
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    cut = head[:space] if space >= limit // 2 else head[: limit - 1]
    return cut.rstrip(" ,;:([{") + "…"
