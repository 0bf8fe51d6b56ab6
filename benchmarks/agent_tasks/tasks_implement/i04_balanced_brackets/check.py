"""Checker of i04_balanced_brackets."""

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
    parse_python(workspace, "brackets.py")
    unchanged(workspace, Path(__file__).parent, "test_brackets.py")
    run_python(
        workspace,
        "from brackets import is_balanced as b\n"
        "assert b('') is True\n"
        "assert b('no brackets') is True\n"
        "assert b('([)]') is False\n"
        "assert b('}{') is False\n"
        "assert b('{[()()]}') is True\n",
    )
    run_pytest(workspace, "test_brackets.py", expect=3)
    return ok("the tests and the hidden cases pass")
