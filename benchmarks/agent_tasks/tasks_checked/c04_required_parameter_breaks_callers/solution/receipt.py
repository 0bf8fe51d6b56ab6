import money


def receipt(paid, change):
    return f"paid {money.format_amount(paid, 'EUR')}, change {money.format_amount(change, 'EUR')}"
