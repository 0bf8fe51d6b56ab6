from money import format_amount


def test_two_decimals():
    assert format_amount(12.5, "EUR").startswith("12.50")
