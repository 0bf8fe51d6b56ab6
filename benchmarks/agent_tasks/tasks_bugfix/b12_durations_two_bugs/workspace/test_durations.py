import pytest

from durations import format_duration, over_limit, parse_duration


def test_parse_hours_and_minutes():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("45s") == 45


def test_parse_allows_spaces_and_capitals():
    assert parse_duration("2d 4H") == 187200


def test_parse_weeks():
    assert parse_duration("1w 2d") == 777600


@pytest.mark.parametrize("text", ["", "10", "5x", "h1", "1h-30m"])
def test_parse_refuses_what_is_not_a_duration(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_format_leaves_out_zero_parts():
    assert format_duration(5400) == "1h 30m"
    assert format_duration(61) == "1m 1s"
    assert format_duration(0) == "0s"


def test_format_more_than_a_day():
    assert format_duration(90061) == "1d 1h 1m 1s"


def test_over_limit():
    assert over_limit(1801, "30m")
    assert not over_limit(1800, "30m")
