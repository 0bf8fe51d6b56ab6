"""Stays as date ranges: the check-in day is included, the check-out day is not.

A guest checking out on the 5th leaves that morning, so the room is free for a guest
checking in on the 5th: the two stays touch but do not overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta


@dataclass(frozen=True)
class Stay:
    """The nights from ``check_in`` (included) to ``check_out`` (excluded)."""

    check_in: date
    check_out: date

    def __post_init__(self) -> None:
        if self.check_out <= self.check_in:
            raise ValueError(f"check-out {self.check_out} is not after check-in {self.check_in}")

    @property
    def nights(self) -> int:
        return (self.check_out - self.check_in).days

    def contains(self, day: date) -> bool:
        """Whether the guest sleeps in the room on the night starting ``day``."""
        return self.check_in <= day < self.check_out

    def overlaps(self, other: Stay) -> bool:
        """Whether the two stays share a night."""
        return self.check_in <= other.check_out and other.check_in <= self.check_out

    def days(self) -> list[date]:
        """The day each night starts, in order."""
        return [self.check_in + timedelta(days=n) for n in range(self.nights)]
