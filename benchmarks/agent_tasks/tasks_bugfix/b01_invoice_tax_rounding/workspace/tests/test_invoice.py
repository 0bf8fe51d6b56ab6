from decimal import Decimal

import pytest

from invoice import Invoice, to_cents


def test_rounding_halves_up():
    assert to_cents(Decimal("0.125")) == Decimal("0.13")
    assert to_cents(Decimal("2.004")) == Decimal("2.00")


def test_subtotal_adds_every_line():
    inv = Invoice()
    inv.add("notebook", "4.99", 2)
    inv.add("pen case", "12.00")
    assert inv.subtotal() == Decimal("21.98")


def test_total_without_discount():
    inv = Invoice()
    inv.add("notebook", "4.99", 2)
    inv.add("pen case", "12.00")
    assert inv.total() == Decimal("26.38")


def test_total_with_discount():
    inv = Invoice(discount_percent=Decimal(25))
    inv.add("desk lamp", "4.50", 3)
    assert inv.discount() == Decimal("3.375")
    assert inv.total() == Decimal("12.15")


def test_discount_over_100_percent_is_refused():
    with pytest.raises(ValueError):
        Invoice(discount_percent=Decimal(120))


def test_quantity_must_be_positive():
    with pytest.raises(ValueError):
        Invoice().add("eraser", "0.80", 0)
