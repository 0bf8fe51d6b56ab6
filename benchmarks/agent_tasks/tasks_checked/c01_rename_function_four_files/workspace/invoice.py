import pricing


def invoice_lines(items):
    """One line per (name, cents) item, the price right-aligned."""
    return [f"{name:<12}{pricing.fmt_price(cents):>10}" for name, cents in items]
