"""Checker of t16_shell_fix_range."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import CheckFailed, Verdict, ok, run_bash


def check(workspace: Path) -> Verdict:
    for n in (3, 1):
        done = run_bash(workspace, "count.sh", str(n))
        want = [str(i) for i in range(1, n + 1)]
        if done.returncode != 0 or done.stdout.split() != want:
            raise CheckFailed(
                f"count.sh {n} printed {done.stdout.split()} (exit {done.returncode})"
            )
    return ok("count.sh N prints 1..N")
