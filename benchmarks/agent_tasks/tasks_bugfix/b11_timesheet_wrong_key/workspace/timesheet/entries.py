"""Time entries as the tracker exports them.

The export is a JSON list of records such as::

    {"date": "2024-04-02", "user": "mia", "client": "Harbour Books",
     "project": "Website relaunch", "task": "design", "minutes": 95, "billable": true}

``task`` is the kind of work (design, meeting, support ...), ``project`` what it was for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import Any


@dataclass(frozen=True)
class Entry:
    """One block of logged time."""

    day: date
    user: str
    client: str
    project: str
    task: str
    minutes: int
    billable: bool = True


def from_record(record: dict[str, Any]) -> Entry:
    """The entry of one exported record; ``billable`` is true when the record omits it.

    Raises:
        ValueError: A record without a needed field, or with a bad date or duration.
    """
    try:
        minutes = int(record["minutes"])
        if minutes < 0:
            raise ValueError(f"negative duration {minutes}")
        return Entry(
            day=date.fromisoformat(record["date"]),
            user=record["user"],
            client=record["client"],
            project=record["task"],
            task=record["task"],
            minutes=minutes,
            billable=bool(record.get("billable", True)),
        )
    except KeyError as exc:
        raise ValueError(f"record {record!r} has no {exc.args[0]!r}") from None


def load(text: str) -> list[Entry]:
    """The entries of an export, in the order logged."""
    records = json.loads(text)
    return [from_record(record) for record in records]
