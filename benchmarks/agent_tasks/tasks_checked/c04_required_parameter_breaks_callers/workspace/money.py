def format_amount(value):
    """Format a number with two decimals, e.g. 12.5 -> '12.50'."""
    return f"{value:.2f}"
