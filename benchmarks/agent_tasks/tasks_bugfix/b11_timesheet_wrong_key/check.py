"""Checker of b11_timesheet_wrong_key."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "timesheet/entries.py")
    parse_python(workspace, "timesheet/report.py")
    run_original_tests(workspace, Path(__file__).parent, expect=6)
    run_python(
        workspace,
        "import json\n"
        "from timesheet import hours_by_project, load\n"
        "rec = {'date': '2024-05-06', 'user': 'u', 'client': 'C', 'minutes': 40}\n"
        "export = json.dumps([{**rec, 'project': 'Audit', 'task': 'review'},\n"
        "                     {**rec, 'project': 'Audit', 'task': 'call'},\n"
        "                     {**rec, 'project': 'Payroll', 'task': 'review'}])\n"
        "entries = load(export)\n"
        "assert [e.task for e in entries] == ['review', 'call', 'review'], entries\n"
        "got = hours_by_project(entries)\n"
        "assert got == {'Audit': 1.33, 'Payroll': 0.67}, got\n",
    )
    return ok("entries keep their project; the tests and the hidden cases pass")
