"""Checker of t06_change_constant."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, run_python


def check(workspace: Path) -> Verdict:
    run_python(
        workspace,
        "import settings\n"
        "assert settings.MAX_RETRIES == 5, settings.MAX_RETRIES\n"
        "assert settings.TIMEOUT_S == 30 and settings.BACKOFF == 1.5, 'other constants changed'\n",
    )
    return ok("MAX_RETRIES is 5, the rest unchanged")
