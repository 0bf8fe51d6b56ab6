"""Checker of t09_add_missing_import."""

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
    tree = parse_python(workspace, "stamp.py")
    if "datetime" not in imported_modules(tree):
        raise CheckFailed("stamp.py does not import datetime")
    run_python(
        workspace,
        "import datetime as dt, stamp\ndt.datetime.fromisoformat(stamp.now_iso())\n",
    )
    return ok("now_iso() returns an ISO timestamp")
