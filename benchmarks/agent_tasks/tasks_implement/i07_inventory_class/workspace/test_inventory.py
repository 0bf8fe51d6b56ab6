import pytest

from inventory import Inventory


def test_add_and_count():
    stock = Inventory()
    stock.add("apple", 3)
    stock.add("apple")
    assert stock.count("apple") == 4


def test_remove_too_many():
    stock = Inventory()
    stock.add("pear", 2)
    with pytest.raises(ValueError):
        stock.remove("pear", 5)
    assert stock.count("pear") == 2


def test_unknown_is_zero():
    assert Inventory().count("plum") == 0
