"""Checker of c11_fix_code_for_failing_tests."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    Verdict,
    ok,
    parse_python,
    run_pytest,
    run_python,
    unchanged,
)


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "prices.py")
    unchanged(workspace, Path(__file__).parent, "tests/test_prices.py")
    run_pytest(workspace, "tests", expect=3)
    run_python(
        workspace,
        "from prices import apply_discount, bulk_price\n"
        "assert apply_discount(10, 100) == 0 and apply_discount(200, 12.5) == 175.0\n"
        "assert bulk_price(1.0, 20) == 18.0\n",
    )
    return ok("the discount is a percentage again; the tests pass unchanged")
