def subtotal(prices):
    return sum(prices)


def _legacy_total(prices, tax):
    total = 0
    for price in prices:
        total = total + price
    return total + total * tax


def total(prices, tax=0.2):
    base = subtotal(prices)
    return round(base * (1 + tax), 2)
