"""Small calendar helpers."""

MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def days_in_month(month: int) -> int:
    """Days in ``month`` (1-12) of a common year."""
    return MONTH_DAYS[month - 1]
