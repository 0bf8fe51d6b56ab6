"""Checker of t07_add_type_hints."""

from __future__ import annotations

import ast
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
    func = function(parse_python(workspace, "scale.py"), "scale", "scale.py")
    missing = [a.arg for a in func.args.args if a.annotation is None]
    if missing:
        raise CheckFailed(f"parameters without a type hint: {', '.join(missing)}")
    if func.returns is None:
        raise CheckFailed("scale has no return type hint")
    hint = ast.unparse(func.args.args[1].annotation)
    if hint != "float":
        raise CheckFailed(f"factor is annotated {hint}, not float")
    run_python(workspace, "from scale import scale; assert scale([1.0, 2.0], 2.0) == [2.0, 4.0]")
    return ok("scale is annotated and still works")
