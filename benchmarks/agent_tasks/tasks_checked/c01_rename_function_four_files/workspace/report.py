from pricing import fmt_price


def daily_report(carts):
    """Revenue of the day and the largest cart."""
    total = sum(c.total_cents() for c in carts)
    best = max((c.total_cents() for c in carts), default=0)
    return f"{len(carts)} carts, revenue {fmt_price(total)}, largest {fmt_price(best)}"
