"""Checker of i08_report_table."""

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
    parse_python(workspace, "report.py")
    unchanged(workspace, Path(__file__).parent, "test_report.py")
    run_python(
        workspace,
        "from report import format_table as f, money, title\n"
        "assert f([]) == ''\n"
        "assert f([['only']]) == 'only'\n"
        "assert f([['a', ''], ['b', 'c']]) == 'a\\nb  c', repr(f([['a', ''], ['b', 'c']]))\n"
        "assert money(-5) == '-0.05' and title('T', 3) == ' T\\n==='\n",
    )
    run_pytest(workspace, "test_report.py", expect=3)
    return ok("the tests and the hidden cases pass")
