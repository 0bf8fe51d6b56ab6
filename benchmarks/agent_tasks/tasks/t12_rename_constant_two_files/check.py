"""Checker of t12_rename_constant_two_files."""

from __future__ import annotations

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
    for name in ("config.py", "client.py"):
        used = names_used(parse_python(workspace, name))
        if "DEFAULT_TIMEOUT" in used:
            raise CheckFailed(f"{name} still uses DEFAULT_TIMEOUT")
        if "REQUEST_TIMEOUT" not in used:
            raise CheckFailed(f"{name} does not use REQUEST_TIMEOUT")
    run_python(
        workspace,
        "import client, config\n"
        "assert config.REQUEST_TIMEOUT == 10\n"
        "assert client.settings() == {'timeout': 10, 'retries': 2}, client.settings()\n",
    )
    return ok("renamed in config.py and client.py")
