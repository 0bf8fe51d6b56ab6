"""Checker of t18_use_constant."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    names_used,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    tree = parse_python(workspace, "app.py")
    literals = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == 8080]
    if literals:
        raise CheckFailed("app.py still has the literal 8080")
    if "PORT" not in names_used(tree):
        raise CheckFailed("app.py does not use PORT")
    run_python(
        workspace,
        "import app, config\n"
        "assert config.PORT == 8080\n"
        "assert app.address() == 'http://127.0.0.1:8080/', app.address()\n",
    )
    return ok("app.py uses config.PORT")
