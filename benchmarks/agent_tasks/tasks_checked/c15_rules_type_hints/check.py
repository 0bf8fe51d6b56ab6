"""Checker of c15_rules_type_hints: the rule file asks for type hints on every function."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    function,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    tree = parse_python(workspace, "dates.py")
    fn = function(tree, "is_leap_year", "dates.py")
    run_python(
        workspace,
        "from dates import is_leap_year as f\n"
        "assert [f(y) for y in (2024, 1900, 2000, 2023, 2400, 2100)] == "
        "[True, False, True, False, True, False]\n",
    )
    untyped = [a.arg for a in fn.args.args if a.annotation is None]
    if untyped or fn.returns is None:
        raise CheckFailed(
            "is_leap_year has no type hints; CLAUDE.md asks for them on every function"
        )
    return ok("is_leap_year is right and typed")
