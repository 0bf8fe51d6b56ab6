import json
from decimal import Decimal

import pytest

from timesheet import hours_by_client, hours_by_project, invoice_lines, load

EXPORT = json.dumps(
    [
        {
            "date": "2024-04-02",
            "user": "mia",
            "client": "Harbour Books",
            "project": "Website relaunch",
            "task": "design",
            "minutes": 90,
        },
        {
            "date": "2024-04-02",
            "user": "raj",
            "client": "Harbour Books",
            "project": "Website relaunch",
            "task": "meeting",
            "minutes": 30,
            "billable": False,
        },
        {
            "date": "2024-04-03",
            "user": "mia",
            "client": "Harbour Books",
            "project": "Newsletter",
            "task": "design",
            "minutes": 45,
        },
        {
            "date": "2024-04-04",
            "user": "raj",
            "client": "Kiln & Co",
            "project": "Shop migration",
            "task": "support",
            "minutes": 120,
        },
    ]
)


def test_load_reads_every_entry():
    entries = load(EXPORT)
    assert len(entries) == 4
    assert entries[1].billable is False
    assert sum(e.minutes for e in entries) == 285


def test_entry_keeps_project_and_task_apart():
    first = load(EXPORT)[0]
    assert first.project == "Website relaunch"
    assert first.task == "design"


def test_record_without_minutes_is_refused():
    with pytest.raises(ValueError):
        load('[{"date": "2024-04-02", "user": "mia", "client": "x", "project": "y", "task": "z"}]')


def test_hours_by_client():
    assert hours_by_client(load(EXPORT)) == {"Harbour Books": 2.75, "Kiln & Co": 2.0}


def test_hours_by_project():
    assert hours_by_project(load(EXPORT)) == {
        "Newsletter": 0.75,
        "Shop migration": 2.0,
        "Website relaunch": 2.0,
    }


def test_invoice_bills_billable_time_only():
    lines = invoice_lines(load(EXPORT), Decimal("80"))
    assert lines == {"Harbour Books": Decimal("180.00"), "Kiln & Co": Decimal("160.00")}
