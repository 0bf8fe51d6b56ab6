import money


def receipt(paid, change):
    return f"paid {money.format_amount(paid)}, change {money.format_amount(change)}"
