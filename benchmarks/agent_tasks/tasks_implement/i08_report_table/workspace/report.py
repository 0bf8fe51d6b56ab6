"""Small helpers to print a sales report as plain text."""

from dataclasses import dataclass


@dataclass
class Sale:
    """One sale: what, how many, at which unit price (in cents)."""

    item: str
    quantity: int
    unit_cents: int

    @property
    def total_cents(self):
        return self.quantity * self.unit_cents


def money(cents):
    """``1234`` -> ``"12.34"``; negative amounts get a leading minus."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def totals_by_item(sales):
    """The total in cents of each item, in the order items first appear."""
    totals = {}
    for sale in sales:
        totals[sale.item] = totals.get(sale.item, 0) + sale.total_cents
    return totals


def grand_total(sales):
    """The total of every sale, in cents."""
    return sum(sale.total_cents for sale in sales)


def title(text, width):
    """``text`` centred in ``width`` columns, underlined with ``=``."""
    return f"{text.center(width).rstrip()}\n{'=' * width}"

def format_table(rows):
    """Lay out ``rows`` (lists of strings) as a plain-text table.

    Each column is as wide as its longest cell; cells are left-aligned and separated by two
    spaces; trailing spaces are removed from every line. Returns the lines joined by
    newlines ("" for no rows). Rows may have fewer cells than others: missing cells are
    empty.
    """
    raise NotImplementedError
