"""Word frequencies of a text, leaving out stop words, for the newsletter's tag cloud.

Words are lower-cased; an apostrophe inside a word keeps it whole (``don't``), and
numbers are not words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

STOP_WORDS = frozenset(
    "a an and are as at be but by for from has have in is it its of on or that the this "
    "to was were will with".split()
)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased, in order."""
    return _WORD.findall(text.lower())


def count_words(
    text: str, counts: Counter[str] | None = None, stop_words: Iterable[str] = STOP_WORDS
) -> Counter[str]:
    """Count the words of ``text`` that are not stop words.

    Args:
        text: The text to count.
        counts: Counts to add to (a running total over several articles); a new counter
            when not given.
        stop_words: The words to leave out.

    Returns:
        ``counts`` with the words of ``text`` added.
    """
    if counts is None:
        counts = Counter()
    skip = {w.lower() for w in stop_words}
    for word in words(text):
        if word not in skip:
            counts[word] += 1
    return counts


def top_words(counts: Counter[str], n: int = 10) -> list[tuple[str, int]]:
    """The ``n`` most frequent words, most frequent first, ties in alphabetical order."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
