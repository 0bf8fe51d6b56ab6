"""Checker of b12_durations_two_bugs."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "durations.py")
    run_original_tests(workspace, Path(__file__).parent, expect=11)
    run_python(
        workspace,
        "from durations import format_duration as f, parse_duration as p\n"
        "assert p('2w') == 1209600, p('2w')\n"
        "assert f(2 * 86400 + 5) == '2d 5s', f(2 * 86400 + 5)\n"
        "assert f(8 * 86400 + 7200) == '8d 2h', f(8 * 86400 + 7200)\n"
        "assert p(f(200000)) == 200000 and f(p('1w 3h')) == '7d 3h'\n",
    )
    return ok("weeks and days are right again; the tests and the hidden cases pass")
