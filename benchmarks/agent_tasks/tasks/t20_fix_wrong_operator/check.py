"""Checker of t20_fix_wrong_operator."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, function, ok, parse_python, run_python


def check(workspace: Path) -> Verdict:
    tree = parse_python(workspace, "shapes.py")
    function(tree, "square_area", "shapes.py")
    run_python(
        workspace,
        "from shapes import rect_area, square_area\n"
        "assert rect_area(3, 4) == 12, rect_area(3, 4)\n"
        "assert square_area(5) == 25, square_area(5)\n",
    )
    return ok("rect_area multiplies")
