"""Checker of t13_add_missing_return."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, run_python


def check(workspace: Path) -> Verdict:
    run_python(
        workspace, "from averages import average; assert average([2, 4]) == 3, average([2, 4])"
    )
    return ok("average returns the average")
