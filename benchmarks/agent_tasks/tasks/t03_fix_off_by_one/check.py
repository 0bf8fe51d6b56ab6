"""Checker of t03_fix_off_by_one."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, function, ok, parse_python, run_python


def check(workspace: Path) -> Verdict:
    function(parse_python(workspace, "lists.py"), "last_n", "lists.py")
    run_python(
        workspace,
        "from lists import last_n\n"
        "assert last_n([1, 2, 3, 4], 2) == [3, 4], last_n([1, 2, 3, 4], 2)\n"
        "assert last_n([1, 2, 3], 1) == [3], last_n([1, 2, 3], 1)\n"
        "assert last_n([1, 2], 0) == []\n"
        "assert last_n([1, 2], 5) == [1, 2], last_n([1, 2], 5)\n",
    )
    return ok("last_n returns the last n items")
