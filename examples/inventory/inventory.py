"""A tiny inventory: items with a price and a quantity."""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int


def calc_total(items):
    """Total value of the items in stock."""
    return sum(item.price * item.quantity for item in items)


def restock(item, amount):
    """Add `amount` units to an item."""
    item.quantity += amount
    return item
