"""Checker of i03_moving_average."""

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
    parse_python(workspace, "series.py")
    unchanged(workspace, Path(__file__).parent, "test_series.py")
    run_python(
        workspace,
        "from series import moving_average as m\n"
        "assert m([2, 4, 6], 3) == [4.0], m([2, 4, 6], 3)\n"
        "assert m([5], 1) == [5.0]\n"
        "assert m([], 1) == []\n"
        "try:\n"
        "    m([1], -2)\n"
        "except ValueError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('no ValueError for window -2')\n",
    )
    run_pytest(workspace, "test_series.py", expect=3)
    return ok("the tests and the hidden cases pass")
