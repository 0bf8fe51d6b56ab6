"""Price formatting shared by the shop's modules."""


def format_price(cents):
    """Format an amount in cents as a price, e.g. 1999 -> '$19.99'."""
    return f"${cents // 100}.{cents % 100:02d}"
