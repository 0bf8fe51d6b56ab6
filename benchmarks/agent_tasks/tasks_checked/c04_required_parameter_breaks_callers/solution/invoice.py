from money import format_amount


def invoice_total(lines):
    """The total line of an invoice of (description, amount) lines."""
    total = sum(amount for _, amount in lines)
    return "Total: " + format_amount(total, "EUR")


def invoice_rows(lines):
    return [f"{text}: {format_amount(amount, 'EUR')}" for text, amount in lines]
