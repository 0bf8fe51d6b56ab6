"""Checker of t10_delete_dead_code."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    functions,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    defined = functions(parse_python(workspace, "billing.py"))
    if "_legacy_total" in defined:
        raise CheckFailed("_legacy_total is still defined")
    missing = {"subtotal", "total"} - set(defined)
    if missing:
        raise CheckFailed(f"also deleted: {', '.join(sorted(missing))}")
    run_python(
        workspace, "from billing import total; assert total([10, 20]) == 36.0, total([10, 20])"
    )
    return ok("_legacy_total removed; subtotal and total kept")
