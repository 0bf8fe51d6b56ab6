"""Checker of c09_implement_parse_duration_with_tests."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    Verdict,
    ok,
    parse_python,
    run_pytest,
    run_python,
    unchanged,
)


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "timeparse.py")
    unchanged(workspace, Path(__file__).parent, "tests/test_timeparse.py")
    run_python(
        workspace,
        "from timeparse import parse_duration as p\n"
        "assert p('2m5s') == 125, p('2m5s')\n"
        "assert p('1h') == 3600 and p('0s') == 0 and p('1h0m1s') == 3601\n"
        "for bad in ['', '5x', '1m1h', 'h', '1h 2m', '-1s']:\n"
        "    try:\n"
        "        p(bad)\n"
        "    except ValueError:\n"
        "        continue\n"
        "    raise AssertionError(f'accepted {bad!r}')\n",
    )
    run_pytest(workspace, "tests", expect=3)
    return ok("parse_duration passes the tests and the hidden cases")
