"""Checker of t01_rename_function."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    function,
    names_used,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    geometry = parse_python(workspace, "geometry.py")
    main = parse_python(workspace, "main.py")
    function(geometry, "compute_area", "geometry.py")
    for name, tree in (("geometry.py", geometry), ("main.py", main)):
        if "calc_area" in names_used(tree):
            raise CheckFailed(f"{name} still uses the name calc_area")
    if "compute_area" not in names_used(main):
        raise CheckFailed("main.py does not use compute_area")
    out = run_python(workspace, "import main; print(main.describe(3, 4))")
    if out.strip() != "3x4 has area 12":
        raise CheckFailed(f"describe(3, 4) printed {out.strip()!r}")
    return ok("renamed in both files; main.describe works")
