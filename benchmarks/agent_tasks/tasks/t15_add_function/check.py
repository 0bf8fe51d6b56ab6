"""Checker of t15_add_function."""

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
    tree = parse_python(workspace, "mathutils.py")
    func = function(tree, "clamp", "mathutils.py")
    if [a.arg for a in func.args.args] != ["value", "low", "high"]:
        raise CheckFailed(f"clamp's parameters are {[a.arg for a in func.args.args]}")
    function(tree, "square", "mathutils.py")
    run_python(
        workspace,
        "from mathutils import clamp, square\n"
        "assert clamp(5, 0, 10) == 5 and clamp(-3, 0, 10) == 0 and clamp(42, 0, 10) == 10\n"
        "assert square(3) == 9\n",
    )
    return ok("clamp works; square kept")
