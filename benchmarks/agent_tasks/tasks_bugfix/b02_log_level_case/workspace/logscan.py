"""Parse application log lines and filter them by severity.

A log entry is one line: ``2024-05-02 14:03:11 WARNING [billing] card declined``. The
services that write these logs disagree on how to spell a level: some write ``WARNING``,
others ``warning`` or ``Warn``, and a few use the short aliases ``WARN``, ``ERR`` and
``FATAL``. Every spelling is read as the same level.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
ALIASES = {"WARN": "WARNING", "ERR": "ERROR", "FATAL": "CRITICAL"}

_ENTRY = re.compile(
    r"^(?P<stamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) +(?P<level>[A-Za-z]+) +"
    r"\[(?P<source>[^\]]+)\] ?(?P<message>.*)$"
)


@dataclass(frozen=True)
class Entry:
    """One parsed log entry; ``level`` is always one of ``LEVELS``."""

    when: datetime
    level: str
    source: str
    message: str


def normalise_level(name: str) -> str:
    """The canonical name of a level, whatever its spelling.

    Raises:
        ValueError: ``name`` is no level and no alias.
    """
    name = name.strip()
    name = ALIASES.get(name, name)
    if name not in LEVELS:
        raise ValueError(f"unknown log level {name!r}")
    return name


def parse_line(line: str) -> Entry | None:
    """The entry on ``line``, or None for a line that is not an entry (a traceback line)."""
    match = _ENTRY.match(line.rstrip("\n"))
    if match is None:
        return None
    return Entry(
        when=datetime.strptime(match["stamp"], "%Y-%m-%d %H:%M:%S"),
        level=normalise_level(match["level"]),
        source=match["source"],
        message=match["message"],
    )


def parse_log(lines: Iterable[str]) -> list[Entry]:
    """Every entry of a log, in order; other lines are skipped."""
    return [entry for entry in map(parse_line, lines) if entry is not None]


def at_least(entries: Iterable[Entry], level: str) -> list[Entry]:
    """The entries of ``level`` or more severe."""
    floor = LEVELS.index(normalise_level(level))
    return [e for e in entries if LEVELS.index(e.level) >= floor]


def count_by_level(entries: Iterable[Entry]) -> dict[str, int]:
    """How many entries of each level, every level listed (zero included)."""
    counts = Counter(e.level for e in entries)
    return {level: counts[level] for level in LEVELS}
