def apply_discount(price, percent):
    """The price after a discount of `percent` percent (0-100), rounded to cents."""
    return round(price - price * percent / 100, 2)


def bulk_price(unit_price, quantity):
    """10 percent off from 10 items on."""
    total = unit_price * quantity
    return apply_discount(total, 10) if quantity >= 10 else round(total, 2)
