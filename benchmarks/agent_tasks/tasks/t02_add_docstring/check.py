"""Checker of t02_add_docstring."""

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
    tree = parse_python(workspace, "stats.py")
    func = function(tree, "mean", "stats.py")
    doc = ast.get_docstring(func)
    if not doc or len(doc.split()) < 2:
        raise CheckFailed(f"mean has no real docstring ({doc!r})")
    run_python(
        workspace,
        "import stats; assert stats.mean([1, 2, 3, 6]) == 3; assert stats.mean([]) == 0.0",
    )
    return ok("mean has a docstring and still computes the mean")
