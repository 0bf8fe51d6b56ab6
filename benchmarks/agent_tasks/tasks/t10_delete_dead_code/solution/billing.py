def subtotal(prices):
    return sum(prices)


def total(prices, tax=0.2):
    base = subtotal(prices)
    return round(base * (1 + tax), 2)
