"""Checker of t08_fix_failing_assertion."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.agent_tasks.checks import CheckFailed, Verdict, ok, parse_python, run_python

ORIGINAL_CHECKS = """
from parity import is_even

assert is_even(0)
assert is_even(4)
assert not is_even(7)
print("all checks passed")
"""


def check(workspace: Path) -> Verdict:
    checks = parse_python(workspace, "check_parity.py")
    if ast.dump(checks) != ast.dump(ast.parse(ORIGINAL_CHECKS)):
        raise CheckFailed("check_parity.py was changed")
    parse_python(workspace, "parity.py")
    run_python(workspace, "import runpy; runpy.run_path('check_parity.py')")
    run_python(
        workspace,
        "from parity import is_even\n"
        "assert [is_even(n) for n in range(4)] == [True, False, True, False]\n",
    )
    return ok("check_parity.py passes unchanged")
