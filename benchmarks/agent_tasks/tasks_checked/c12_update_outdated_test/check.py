"""Checker of c12_update_outdated_test."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    function,
    ok,
    parse_python,
    run_pytest,
    unchanged,
)


def check(workspace: Path) -> Verdict:
    unchanged(workspace, Path(__file__).parent, "names.py")
    tree = parse_python(workspace, "test_names.py")
    for name in ("test_two_names", "test_lowercase_input"):
        fn = function(tree, name, "test_names.py")
        asserts = [n for n in ast.walk(fn) if isinstance(n, ast.Assert)]
        if not asserts or "initials" not in ast.dump(fn):
            raise CheckFailed(f"{name} no longer checks initials()")
    if "A.L." not in (workspace / "test_names.py").read_text(encoding="utf-8"):
        raise CheckFailed("test_two_names does not expect 'A.L.'")
    run_pytest(workspace, "test_names.py", expect=2)
    return ok("the outdated test expects the new output; names.py unchanged")
