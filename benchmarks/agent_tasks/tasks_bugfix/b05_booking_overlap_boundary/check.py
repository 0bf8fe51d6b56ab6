"""Checker of b05_booking_overlap_boundary."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "dateranges.py")
    parse_python(workspace, "bookings.py")
    run_original_tests(workspace, Path(__file__).parent, expect=7)
    run_python(
        workspace,
        "from datetime import date\n"
        "from dateranges import Stay\n"
        "def s(a, b):\n"
        "    return Stay(date(2025, 1, a), date(2025, 1, b))\n"
        "assert not s(10, 12).overlaps(s(12, 20)) and not s(12, 20).overlaps(s(10, 12))\n"
        "assert s(10, 12).overlaps(s(11, 13)) and s(11, 13).overlaps(s(10, 12))\n"
        "assert s(10, 20).overlaps(s(14, 15)) and s(14, 15).overlaps(s(10, 20))\n"
        "assert s(10, 11).overlaps(s(10, 11))\n"
        "assert not s(1, 2).overlaps(s(3, 4))\n",
    )
    return ok("stays that only touch do not overlap; the tests and hidden cases pass")
