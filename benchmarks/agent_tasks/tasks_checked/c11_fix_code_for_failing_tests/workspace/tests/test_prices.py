from prices import apply_discount, bulk_price


def test_discount():
    assert apply_discount(80.0, 25) == 60.0


def test_no_discount():
    assert apply_discount(19.99, 0) == 19.99


def test_bulk():
    assert bulk_price(2.5, 10) == 22.5
    assert bulk_price(2.5, 4) == 10.0
