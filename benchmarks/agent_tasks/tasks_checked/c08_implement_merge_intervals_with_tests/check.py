"""Checker of c08_implement_merge_intervals_with_tests."""

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
    parse_python(workspace, "intervals.py")
    unchanged(workspace, Path(__file__).parent, "test_intervals.py")
    run_python(
        workspace,
        "from intervals import merge_intervals as m\n"
        "given = [(5, 9), (1, 2), (2, 3), (8, 12), (20, 20)]\n"
        "copy = list(given)\n"
        "assert m(given) == [(1, 3), (5, 12), (20, 20)], m(given)\n"
        "assert given == copy, 'the input was changed'\n"
        "assert m([(1, 10), (2, 3)]) == [(1, 10)], m([(1, 10), (2, 3)])\n"
        "assert m([(0, 0)]) == [(0, 0)]\n",
    )
    run_pytest(workspace, "test_intervals.py", expect=3)
    return ok("merge_intervals passes the tests and the hidden cases")
