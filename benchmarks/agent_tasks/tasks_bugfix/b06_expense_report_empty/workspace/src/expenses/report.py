"""Summarise an expenses CSV export: count, total, average and largest, per category.

The export has a header line ``date,category,amount`` and one expense a line; amounts
are in euros with a dot (``12.50``). A month with no expenses exports the header alone,
and its report is a report of zeros, not an error.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


@dataclass(frozen=True)
class Summary:
    """Figures over a list of amounts, each in euros to the cent."""

    count: int
    total: Decimal
    average: Decimal
    largest: Decimal


def read_expenses(text: str) -> list[tuple[str, Decimal]]:
    """``(category, amount)`` of each line of the export; blank lines are skipped.

    Raises:
        ValueError: An amount that is not a number, with its line number.
    """
    rows: list[tuple[str, Decimal]] = []
    for number, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        if not any((value or "").strip() for value in row.values()):
            continue
        try:
            amount = Decimal(row["amount"].strip())
        except (InvalidOperation, AttributeError):
            raise ValueError(f"line {number}: {row['amount']!r} is not an amount") from None
        rows.append((row["category"].strip().lower(), amount))
    return rows


def summarise(amounts: list[Decimal]) -> Summary:
    """The summary of ``amounts``; all zeros when there are none."""
    total = sum(amounts, ZERO)
    average = (total / len(amounts)).quantize(CENT)
    return Summary(len(amounts), total.quantize(CENT), average, max(amounts).quantize(CENT))


def by_category(text: str) -> dict[str, Summary]:
    """A summary per category of the export, categories in alphabetical order."""
    grouped: dict[str, list[Decimal]] = {}
    for category, amount in read_expenses(text):
        grouped.setdefault(category, []).append(amount)
    return {name: summarise(grouped[name]) for name in sorted(grouped)}


def report(text: str) -> str:
    """The report as printed: one line per category, then the line of all expenses."""
    lines = [f"{'category':<12}{'count':>6}{'total':>10}{'average':>10}{'largest':>10}"]
    everything = summarise([amount for _, amount in read_expenses(text)])
    for name, s in [*by_category(text).items(), ("TOTAL", everything)]:
        lines.append(f"{name:<12}{s.count:>6}{s.total:>10}{s.average:>10}{s.largest:>10}")
    return "\n".join(lines)
