"""Checker of c02_rename_class_with_tests."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    names_used,
    ok,
    parse_python,
    run_pytest,
    run_python,
)

FILES = ("models.py", "store.py", "api.py", "tests/test_store.py")


def check(workspace: Path) -> Verdict:
    for name in FILES:
        used = names_used(parse_python(workspace, name))
        if "UserRecord" in used:
            raise CheckFailed(f"{name} still uses UserRecord")
        if "Account" not in used:
            raise CheckFailed(f"{name} does not use Account")
    run_pytest(workspace, "tests", expect=2)
    run_python(
        workspace,
        "from models import Account\n"
        "from store import Store\n"
        "a = Store().create('Bo', 'bo@x')\n"
        "assert type(a) is Account and not a.is_admin()\n",
    )
    return ok("Account everywhere; the two tests pass")
