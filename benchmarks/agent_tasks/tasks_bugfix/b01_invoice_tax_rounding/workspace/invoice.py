"""Invoices: line items, a percentage discount and sales tax, totalled to the cent.

Unit prices may carry fractions of a cent (bulk prices such as 0.125 per screw). Amounts
stay exact until the total is computed, and the total is rounded once, to the cent, with
halves rounded up: rounding at an earlier step makes the cents drift from what the
accounting system computes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def to_cents(amount: Decimal) -> Decimal:
    """Round ``amount`` to whole cents, halves up (0.125 -> 0.13)."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Line:
    """One line of an invoice: a unit price (exact) times a quantity."""

    description: str
    unit_price: Decimal
    quantity: int = 1

    @property
    def amount(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Invoice:
    """An invoice under construction.

    ``discount_percent`` applies to the whole subtotal; ``tax_rate`` (0.20 for 20 %) to the
    amount left after the discount.
    """

    discount_percent: Decimal = Decimal(0)
    tax_rate: Decimal = Decimal("0.20")
    lines: list[Line] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not Decimal(0) <= self.discount_percent <= Decimal(100):
            raise ValueError(f"discount must be between 0 and 100, got {self.discount_percent}")

    def add(self, description: str, unit_price: str | Decimal, quantity: int = 1) -> Line:
        """Add a line; ``unit_price`` as a string or Decimal, never a float."""
        if quantity < 1:
            raise ValueError(f"quantity must be at least 1, got {quantity}")
        line = Line(description, Decimal(unit_price), quantity)
        self.lines.append(line)
        return line

    def subtotal(self) -> Decimal:
        """The sum of the lines, exact."""
        return sum((line.amount for line in self.lines), Decimal(0))

    def discount(self) -> Decimal:
        """The discount taken off the subtotal, exact."""
        return self.subtotal() * self.discount_percent / 100

    def total(self) -> Decimal:
        """The amount due: subtotal less discount, plus tax, rounded to the cent."""
        net = self.subtotal() - self.discount()
        tax = to_cents(net * self.tax_rate)
        return to_cents(net + tax)
