from datetime import date

import pytest

from bookings import BookingError, Calendar


@pytest.fixture
def calendar():
    cal = Calendar(["101", "102"])
    cal.book("101", "Ines", date(2024, 7, 3), date(2024, 7, 6))
    return cal


def test_a_free_room_can_be_booked(calendar):
    booking = calendar.book("102", "Tomas", date(2024, 7, 3), date(2024, 7, 5))
    assert booking.stay.nights == 2
    assert [b.guest for b in calendar.bookings("102")] == ["Tomas"]


def test_overlapping_stay_is_refused(calendar):
    with pytest.raises(BookingError):
        calendar.book("101", "Tomas", date(2024, 7, 5), date(2024, 7, 8))


def test_check_in_on_the_previous_check_out_day(calendar):
    calendar.book("101", "Tomas", date(2024, 7, 6), date(2024, 7, 9))
    assert [b.guest for b in calendar.bookings("101")] == ["Ines", "Tomas"]


def test_check_out_on_the_next_check_in_day(calendar):
    calendar.book("101", "Ama", date(2024, 7, 1), date(2024, 7, 3))
    assert [b.guest for b in calendar.bookings("101")] == ["Ama", "Ines"]


def test_room_is_free_on_the_check_out_night(calendar):
    assert not calendar.is_free("101", date(2024, 7, 5))
    assert calendar.is_free("101", date(2024, 7, 6))
    assert calendar.free_rooms(date(2024, 7, 4)) == ["102"]


def test_check_out_before_check_in_is_refused(calendar):
    with pytest.raises(ValueError):
        calendar.book("102", "Tomas", date(2024, 7, 5), date(2024, 7, 5))


def test_unknown_room_is_refused(calendar):
    with pytest.raises(BookingError):
        calendar.book("303", "Tomas", date(2024, 7, 1), date(2024, 7, 2))
