"""Totals for the monthly report and the invoice lines per client."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from decimal import Decimal

from timesheet.entries import Entry


def _hours(entries: Iterable[Entry], key: Callable[[Entry], str]) -> dict[str, float]:
    minutes: dict[str, int] = defaultdict(int)
    for entry in entries:
        minutes[key(entry)] += entry.minutes
    return {name: round(minutes[name] / 60, 2) for name in sorted(minutes)}


def hours_by_project(entries: Iterable[Entry]) -> dict[str, float]:
    """Hours logged per project, in alphabetical order, to two decimals."""
    return _hours(entries, lambda e: e.project)


def hours_by_client(entries: Iterable[Entry]) -> dict[str, float]:
    """Hours logged per client, in alphabetical order, to two decimals."""
    return _hours(entries, lambda e: e.client)


def invoice_lines(entries: Iterable[Entry], hourly_rate: Decimal) -> dict[str, Decimal]:
    """What to bill each client: billable minutes at ``hourly_rate``, to the cent."""
    minutes: dict[str, int] = defaultdict(int)
    for entry in entries:
        if entry.billable:
            minutes[entry.client] += entry.minutes
    return {
        client: (hourly_rate * minutes[client] / 60).quantize(Decimal("0.01"))
        for client in sorted(minutes)
    }
