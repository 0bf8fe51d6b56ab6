"""Split search results into numbered pages for the shop's product listing.

Pages are numbered from 1. A listing with no results still shows page 1 (empty, with a
"nothing found" note), but it counts no pages: the navigation bar then shows no links.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of results and where it sits among the others."""

    number: int
    items: Sequence[T]
    total_pages: int

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.total_pages


def page_count(total: int, per_page: int) -> int:
    """How many pages ``total`` results fill at ``per_page`` a page (a partial page counts).

    Raises:
        ValueError: ``per_page`` is not positive or ``total`` is negative.
    """
    if per_page < 1:
        raise ValueError(f"per_page must be at least 1, got {per_page}")
    if total < 0:
        raise ValueError(f"total cannot be negative, got {total}")
    return (total + per_page - 1) // per_page


def get_page(items: Sequence[T], number: int, per_page: int = 20) -> Page[T]:
    """Page ``number`` of ``items``.

    Raises:
        ValueError: No such page (page 1 always exists, even when ``items`` is empty).
    """
    count = page_count(len(items), per_page)
    if number < 1 or number > max(count, 1):
        raise ValueError(f"no page {number}: there are {count} pages")
    start = (number - 1) * per_page
    return Page(number, items[start : start + per_page], count)


def page_links(current: int, total_pages: int, window: int = 2) -> list[int]:
    """The page numbers the navigation bar shows: ``window`` pages either side of
    ``current``, kept within 1..``total_pages``."""
    first = max(1, current - window)
    last = min(total_pages, current + window)
    return list(range(first, last + 1))
