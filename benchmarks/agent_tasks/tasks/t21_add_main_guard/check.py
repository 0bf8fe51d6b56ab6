"""Checker of t21_add_main_guard."""

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


def _is_main_test(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and "__main__" in ast.unparse(node.test)
        and "__name__" in ast.unparse(node.test)
    )


def check(workspace: Path) -> Verdict:
    tree = parse_python(workspace, "cli.py")
    function(tree, "main", "cli.py")
    bare = [s for s in tree.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
    if bare:
        raise CheckFailed(f"cli.py still calls {ast.unparse(bare[0])} at import")
    guards = [s for s in tree.body if _is_main_test(s)]
    if not guards or "main()" not in [ast.unparse(s) for s in guards[0].body]:
        raise CheckFailed("no if __name__ == '__main__': main() block")
    out = run_python(workspace, "import cli")
    if out.strip():
        raise CheckFailed(f"importing cli.py printed {out.strip()!r}")
    out = run_python(workspace, "import runpy; runpy.run_path('cli.py', run_name='__main__')")
    if "running the tool" not in out:
        raise CheckFailed("running cli.py as a script no longer runs main()")
    return ok("main() runs only as a script")
