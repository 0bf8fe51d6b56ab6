"""Checker of t14_remove_unused_import."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    imported_modules,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    modules = imported_modules(parse_python(workspace, "paths.py"))
    if "sys" in modules:
        raise CheckFailed("paths.py still imports sys")
    if "os" not in modules:
        raise CheckFailed("the used import os was removed")
    run_python(
        workspace,
        "import os, paths\n"
        "assert paths.home_file('x') == os.path.join(os.path.expanduser('~'), 'x')\n",
    )
    return ok("sys import removed, os kept")
