"""The booking calendar: who has which room on which nights."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date

from dateranges import Stay


class BookingError(Exception):
    """A booking that cannot be made; the message says why."""


@dataclass(frozen=True)
class Booking:
    """One guest's stay in one room."""

    guest: str
    room: str
    stay: Stay


class Calendar:
    """The bookings of every room, kept free of double bookings."""

    def __init__(self, rooms: list[str]) -> None:
        self.rooms = list(rooms)
        self._by_room: dict[str, list[Booking]] = defaultdict(list)

    def book(self, room: str, guest: str, check_in: date, check_out: date) -> Booking:
        """Book ``room`` for ``guest``.

        Raises:
            BookingError: The room does not exist or is taken on one of the nights.
            ValueError: Check-out is not after check-in.
        """
        if room not in self.rooms:
            raise BookingError(f"there is no room {room!r}")
        stay = Stay(check_in, check_out)
        for other in self._by_room[room]:
            if other.stay.overlaps(stay):
                raise BookingError(f"room {room} is taken by {other.guest} on some of those nights")
        booking = Booking(guest, room, stay)
        self._by_room[room].append(booking)
        return booking

    def bookings(self, room: str) -> list[Booking]:
        """The bookings of ``room``, earliest first."""
        return sorted(self._by_room[room], key=lambda b: b.stay.check_in)

    def is_free(self, room: str, day: date) -> bool:
        """Whether nobody sleeps in ``room`` on the night starting ``day``."""
        return not any(b.stay.contains(day) for b in self._by_room[room])

    def free_rooms(self, day: date) -> list[str]:
        """The rooms nobody sleeps in on the night starting ``day``."""
        return [room for room in self.rooms if self.is_free(room, day)]
