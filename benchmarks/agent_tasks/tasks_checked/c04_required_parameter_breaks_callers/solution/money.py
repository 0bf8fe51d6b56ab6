def format_amount(value, currency):
    """Format a number with two decimals and its currency, e.g. 12.5, 'EUR' -> '12.50 EUR'."""
    return f"{value:.2f} {currency}"
