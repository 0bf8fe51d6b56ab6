"""Checker of b07_backoff_swapped_arguments."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "backoff.py")
    run_original_tests(workspace, Path(__file__).parent, expect=7)
    run_python(
        workspace,
        "from backoff import retry, schedule\n"
        "assert schedule(3, base=2.0, factor=3.0) == [2.0, 6.0, 18.0], schedule(3, 2.0, 3.0)\n"
        "assert schedule(6, base=1.0, cap=10.0) == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]\n"
        "assert schedule(0) == []\n"
        "slept = []\n"
        "def down():\n"
        "    raise ConnectionError\n"
        "try:\n"
        "    retry(down, retries=3, sleep=slept.append, base=0.25)\n"
        "except ConnectionError:\n"
        "    pass\n"
        "assert slept == [0.25, 0.5, 1.0], slept\n",
    )
    return ok("the schedule grows from the base; the tests and hidden cases pass")
