"""Durations for the build dashboard: read ``1h 30m`` style limits, show run times.

Units: ``w`` (week), ``d``, ``h``, ``m`` and ``s``, in either case, parts in any order
with or without spaces between them. Shown durations use days at most (``8d 2h``) and
leave out the parts that are zero.
"""

from __future__ import annotations

import re

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR

_UNITS = {"w": 7 * HOUR, "d": DAY, "h": HOUR, "m": MINUTE, "s": 1}
_DURATION = re.compile(r"(?:\d+[wdhms])+")
_PART = re.compile(r"(\d+)([wdhms])")


def parse_duration(text: str) -> int:
    """The seconds of ``text`` (``"1h30m"`` -> 5400).

    Raises:
        ValueError: ``text`` is empty or not made of number-and-unit parts.
    """
    compact = re.sub(r"\s+", "", text).lower()
    if not _DURATION.fullmatch(compact):
        raise ValueError(f"not a duration: {text!r} (write it like 1h 30m)")
    return sum(int(number) * _UNITS[unit] for number, unit in _PART.findall(compact))


def format_duration(seconds: int) -> str:
    """``seconds`` as the dashboard shows it (5400 -> ``"1h 30m"``, 0 -> ``"0s"``).

    Raises:
        ValueError: ``seconds`` is negative.
    """
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative, got {seconds}")
    days, rest = divmod(seconds, DAY)
    hours, rest = divmod(seconds, HOUR)
    minutes, secs = divmod(rest, MINUTE)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")]
    shown = [f"{value}{unit}" for value, unit in parts if value]
    return " ".join(shown) or "0s"


def over_limit(run_seconds: int, limit: str) -> bool:
    """Whether a build that ran ``run_seconds`` went over ``limit`` (a duration text)."""
    return run_seconds > parse_duration(limit)
