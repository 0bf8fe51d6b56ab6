"""Small calendar helpers."""

MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def days_in_month(month: int) -> int:
    """Days in ``month`` (1-12) of a common year."""
    return MONTH_DAYS[month - 1]


def is_leap_year(year: int) -> bool:
    """Whether ``year`` is a leap year in the Gregorian calendar."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
