"""aider on a HumanEval task: its workspace without the tests, two tries, the judgement.

Install aider once (its own venv; ``benchmarks.aider_peer.harness``):

    python -m benchmarks.humaneval.aider_run --install [--venv DIR]     # default: .aider-venv

aider runs with the shared settings of ``harness.aider_args``, without git or aider's own test
runs: the tests stay hidden. Two tries, as aider's benchmark drives it: after the first, the
driver (``benchmarks/aider_peer/driver.py``) runs the judge and the second try gets the test
output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.aider_peer.harness import (
    AIDER_VERSION,
    DEFAULT_VENV,
    ROOT,
    AiderSetup,
    aider_args,
    drive,
    install,
    installed_version,
)
from benchmarks.humaneval.judge import Judgement, judge_workspace

TRIES = 2


@dataclass
class AiderRun:
    """One task's aider run: the driver's tries, the final judgement, the times."""

    judgement: Judgement
    wall_s: float
    """Seconds of the tries (aider's start-up not included, as Cadenza's server start is not)."""
    total_s: float
    stop_reason: str
    """``done`` (the driver finished its tries), ``timeout`` or ``error``."""
    tries: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


def _judge_argv(task_folder: Path, workspace: Path) -> list[str]:
    return [sys.executable, "-m", "benchmarks.humaneval.judge", str(task_folder), str(workspace)]


def run_aider(
    setup: AiderSetup, *, task_folder: Path, text: str, folder: Path, timeout: float
) -> AiderRun:
    """Run aider on the task in ``folder`` (its workspace without the tests), then judge."""
    meta = json.loads((task_folder / "meta.json").read_text(encoding="utf-8"))
    workspace = folder / "workspace"
    shutil.copytree(
        task_folder / "workspace", workspace, ignore=shutil.ignore_patterns(meta["test_module"])
    )
    spec = {
        "files": [meta["module"]],
        "message": text,
        "aider_args": aider_args(setup, folder, timeout),
        "judge": _judge_argv(task_folder, workspace),
        "repo_root": str(ROOT),
        "tries": TRIES,
    }
    run = drive(setup, spec, folder=folder, workspace=workspace, timeout=timeout)
    return AiderRun(
        judgement=judge_workspace(task_folder, workspace),
        wall_s=run.wall_s,
        total_s=run.total_s,
        stop_reason=run.stop_reason,
        tries=run.tries,
        error=run.error,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.humaneval.aider_run")
    parser.add_argument("--install", action="store_true", help=f"install aider {AIDER_VERSION}")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args(argv)
    if args.install:
        python = install(args.venv)
        print(f"aider {installed_version(args.venv)} in {python}")
        return 0
    print(f"aider {installed_version(args.venv) or 'is not installed'} in {args.venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
