"""Checker of i06_compare_versions."""

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
    parse_python(workspace, "versions.py")
    unchanged(workspace, Path(__file__).parent, "test_versions.py")
    run_python(
        workspace,
        "from versions import compare_versions as c\n"
        "assert c('2', '10') == -1, c('2', '10')\n"
        "assert c('1.0.1', '1') == 1, c('1.0.1', '1')\n"
        "assert c('3.4.5', '3.4.5') == 0\n",
    )
    run_pytest(workspace, "test_versions.py", expect=3)
    return ok("the tests and the hidden cases pass")
