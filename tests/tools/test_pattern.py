"""``tools.pattern.LinePattern``: the lines a search finds are those each line alone matches.

The scan of a whole file (one bounded call per line where a match starts) must find exactly
the lines that searching each line alone finds, whatever the pattern: anchors, classes that
match a line break, empty matches, lookarounds, backreferences, invalid patterns, every kind
of line ending. ``re`` on each line is the reference.
"""

from __future__ import annotations

import re

import pytest

from cadenza.tools.pattern import LinePattern

TEXTS = [
    "foo\nbar foo\n\nfoobar\n  foo  \nxfoox\n",
    "a b\na\nb\na  b\r\nab\rb a\n",
    "line one\r\nline two\r\nlast without end",
    "x" * 50 + "\n" + "y" * 50 + "\nfoo",
    "tab\there\fform feed\x0bvt\nend\n",
    "",
    "\n\n\n",
    "(paren) [bracket] a[0] len(x) - 1\n",
    "aa\naaa\nabab\n",
]
PATTERNS = [
    "foo",
    "^foo",
    "foo$",
    r"\bfoo\b",
    r"a\s+b",
    r"a\s*b",
    "[^x]+",
    "x*",
    "",
    "(",
    "a.b",
    r"\d+",
    "(?i)FOO",
    "(?=foo)",
    r"foo(?!\s)",
    r"(?<=\s)foo",
    r"\Afoo",
    r"foo\Z",
    r"(a)\1",
    "len(x) - 1",
    "a[0]",
    r"^\s*$",
    "$",
    "^",
    r"\s",
    r"(?s).+",
]


def reference(pattern: str, text: str) -> list[tuple[int, str]]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        compiled: re.Pattern[str] | None = re.compile(pattern)
    except re.error:
        compiled = None
    return [
        (n, line)
        for n, line in enumerate(lines, start=1)
        if pattern in line or (compiled is not None and compiled.search(line))
    ]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_scan_finds_what_each_line_alone_matches(pattern: str) -> None:
    for text in TEXTS:
        assert list(LinePattern(pattern).lines(text)) == reference(pattern, text), (pattern, text)


def test_line_numbers_follow_read_file() -> None:
    # A form feed is no line break (LSP), so the numbers agree with read_file's.
    text = "one\fstill one\ntwo\r\nthree\rfour"
    assert list(LinePattern("o").lines(text)) == [(1, "one\fstill one"), (2, "two"), (4, "four")]
