import pytest

from timeparse import parse_duration


def test_hours_and_minutes():
    assert parse_duration("1h30m") == 5400


def test_seconds_only():
    assert parse_duration("45s") == 45


def test_rejects_a_bare_number():
    with pytest.raises(ValueError):
        parse_duration("10")
