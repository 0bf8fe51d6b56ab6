"""aider on the agent task sets, judged by the tasks' checkers as Cadenza's runs are.

    python -m benchmarks.agent_tasks.aider [--set bugfix] [--tasks b04,b10] [--timeout 300]
        [--model qwen2.5-coder-1.5b] [--aider-venv DIR] [--results-dir DIR] [--keep DIR]

One llama-server is started the way Cadenza's local provider starts its own (``LlamaServer.start``:
the same GGUF, context size, slots, threads and flags) and aider (``aider-chat`` 0.86.2, its own
venv, the shared settings of ``benchmarks.aider_peer.harness``) talks to it. Each task's workspace
is copied to a temporary folder made a git repository with one commit (a person's project), and
aider is run there as a person asking it to fix failing tests would: every ``*.py`` file of the
project (the sources and the tests) added to the chat, the task text as the message, whole-file
edits, and the project's tests as aider's test command with ``--auto-test``: after each edit aider
runs them and, while they fail, gives the model their output to fix (aider's default of at most 3
reflections). The tests run with the Python and pytest options the checkers use. Then the task's
``check.py`` judges the workspace. The report has the shape of ``run.py``'s (variant ``aider``),
so ``run.py --show`` and ``compare.py`` read it; it is saved after every task.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from benchmarks.agent_tasks.checks import PYTEST_ENV
from benchmarks.agent_tasks.observe import LogSlice
from benchmarks.agent_tasks.run import (
    RESULTS_DIR,
    TaskResult,
    Variant,
    build_report,
    machine_info,
    save,
)
from benchmarks.agent_tasks.tasks import SETS, Task, load_tasks
from benchmarks.aider_peer.harness import (
    DEFAULT_VENV,
    ROOT,
    AiderSetup,
    aider_args,
    drive,
    installed_version,
    make_setup,
)
from cadenza.config import LOCAL_CANDIDATES, CadenzaConfig
from cadenza.providers.llama_server import LlamaServer
from cadenza.providers.local import DEFAULT_MAX_TOKENS
from cadenza.providers.models import model_path

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_TIMEOUT_S = 300.0
MAX_REFLECTIONS = 3
"""aider's own limit on fixing rounds after its test run fails (``Coder.max_reflections``)."""
_GIT_STATUS = {"M": "modified", "A": "created", "?": "created", "D": "deleted", "R": "renamed"}


@dataclass
class AiderTaskResult(TaskResult):
    """``run.py``'s result of a task, with what aider itself reports.

    ``steps`` counts the model requests llama-server finished during the task.
    """

    reflections: int | None = None
    """aider's fixing rounds after a failed test run (None: the driver did not finish)."""
    tests_passed_last: bool | None = None
    """How aider's last test run ended (None: it ran none, i.e. no edit was made)."""
    aider_tokens: dict[str, int] | None = None
    """Prompt and completion tokens as aider counted them."""


def pytest_command(python: str = sys.executable) -> str:
    """The project's test run as aider gets it: pytest by the checkers' Python."""
    return shlex.join([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"])


def chat_files(workspace: Path) -> list[str]:
    """Every Python file of the project (sources and tests), relative, ``/``-separated."""
    return sorted(
        p.relative_to(workspace).as_posix()
        for p in workspace.rglob("*.py")
        if ".git" not in p.parts and "__pycache__" not in p.parts
    )


def task_spec(
    setup: AiderSetup, task: Task, *, workspace: Path, logs: Path, timeout: float, python: str
) -> dict[str, Any]:
    """The driver's spec: the task text as typed, once; aider's own test loop does the rest."""
    return {
        "files": chat_files(workspace),
        "message": task.text,
        "aider_args": aider_args(setup, logs, timeout, test_cmd=pytest_command(python), git=True),
        "tries": 1,
        "notes": False,
    }


def _git(workspace: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=benchmark", "-c", "user.email=benchmark@localhost", *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def init_repo(workspace: Path) -> None:
    """Make ``workspace`` a git repository with its starting files committed."""
    _git(workspace, "init", "-q")
    _git(workspace, "add", "-A")
    _git(workspace, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "start")


def changed_files(workspace: Path) -> list[str]:
    """``<kind> <path>`` of each file that differs from the starting commit, sorted."""
    rows = _git(workspace, "status", "--porcelain", "--untracked-files=all").splitlines()
    return sorted(
        f"{_GIT_STATUS.get(row[:2].strip()[:1], 'modified')} {row[3:]}"
        for row in rows
        if "__pycache__" not in row
    )


def run_task(
    task: Task, *, setup: AiderSetup, timeout: float, scratch: Path, log: Path
) -> AiderTaskResult:
    """aider on ``task`` in a fresh copy under ``scratch``; the checker's verdict."""
    folder = scratch / task.id
    workspace = task.copy_workspace(folder / "workspace")
    init_repo(workspace)
    spec = task_spec(
        setup, task, workspace=workspace, logs=folder, timeout=timeout, python=sys.executable
    )
    piece = LogSlice(log)
    run = drive(setup, spec, folder=folder, workspace=workspace, timeout=timeout, env=PYTEST_ENV)
    verdict = task.check(workspace)
    usage = piece.save(folder / "llama-server.log")
    last = run.tries[-1] if run.tries else {}
    return AiderTaskResult(
        task=task.id,
        kind=task.kind,
        success=verdict.passed,
        check_reason=verdict.reason,
        stop_reason=run.stop_reason,
        steps=int(usage["requests"]) if usage else 0,
        wall_s=run.wall_s,
        total_s=run.total_s,
        files_changed=changed_files(workspace),
        tokens=usage,
        error=run.error,
        reflections=last.get("reflections"),
        tests_passed_last=last.get("test_outcome"),
        aider_tokens={k: last[k] for k in ("prompt_tokens", "completion_tokens")} if last else None,
    )


async def run_all(
    tasks: list[Task],
    *,
    model: str,
    task_set: str,
    timeout: float,
    aider_venv: Path,
    scratch: Path,
    agent_slots: int,
    console: Console,
    checkpoint: Callable[[dict[str, Any]], object],
) -> dict[str, Any]:
    """Start the server, run aider on every task, return the report."""
    path = model_path(model)
    if path is None:
        raise SystemExit(f"model {model} is not pulled: cadenza models pull {model}")
    ctx_size = CadenzaConfig.model_fields["context_size"].default
    log = scratch / "llama-server.log"
    server = await LlamaServer.start(path, ctx_size=ctx_size, log_path=log, agent_slots=agent_slots)
    setup = make_setup(
        aider_venv,
        base_url=server.base_url,
        model_name=model,
        folder=scratch,
        ctx_size=ctx_size,
        max_tokens=DEFAULT_MAX_TOKENS,
    )
    version = installed_version(aider_venv)
    variant = Variant(
        name="aider",
        description=f"aider {version}: whole-file edits, every .py file in the chat, the "
        f"project's tests after each edit (--auto-test, at most {MAX_REFLECTIONS} reflections)",
    )
    machine = machine_info()
    date = datetime.now(UTC).isoformat(timespec="seconds")
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    results: list[TaskResult] = []

    def report() -> dict[str, Any]:
        with contextlib.suppress(OSError):
            machine["loadavg_end"] = list(os.getloadavg())
        out = build_report(
            model=f"local/{model}",
            variant=variant,
            max_steps=None,
            timeout=timeout,
            date=date,
            machine=machine,
            planned=len(tasks),
            results=results,
            commit=commit or None,
            task_set=task_set,
            allow_commands=True,
        )
        out["agent"] = {
            "name": "aider",
            "version": version,
            "edit_format": "whole",
            "test_cmd": pytest_command(),
            "max_reflections": MAX_REFLECTIONS,
        }
        out["server"] = {"ctx_size": ctx_size, "n_ctx": server.n_ctx, "build": server.build}
        return out

    try:
        for n, task in enumerate(tasks, 1):
            result = await asyncio.to_thread(
                run_task, task, setup=setup, timeout=timeout, scratch=scratch, log=log
            )
            results.append(result)
            checkpoint(report())
            mark = "[green]pass[/]" if result.success else "[red]fail[/]"
            console.print(
                f"[{n}/{len(tasks)}] {task.id}: {mark} {result.stop_reason}, "
                f"{result.wall_s:.0f} s, {result.reflections} reflections: {result.check_reason}"
            )
    finally:
        await server.stop()
    return report()


def markdown(report: dict[str, Any]) -> str:
    """The per-task results and the summary line as a Markdown table."""
    rows = [
        "| task | done | stop | s | requests | reflections | out tokens | checker |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        tokens = r["tokens"]["completion_tokens"] if r["tokens"] else "n/a"
        reason = r["check_reason"].replace("|", "/")
        if r["error"]:
            reason += f" ({r['error']})"
        rows.append(
            f"| {r['task']} | {'yes' if r['success'] else 'no'} | {r['stop_reason']} "
            f"| {r['wall_s']:.0f} | {r['steps']} | {r.get('reflections', 'n/a')} | {tokens} "
            f"| {reason} |"
        )
    s = report["summary"]
    rows.append(
        f"| **total** | **{s['done']}/{s['tasks']}** | | med {s['median_wall_s']} | | | | |"
    )
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.agent_tasks.aider", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument("--set", dest="task_set", default="bugfix", choices=sorted(SETS))
    parser.add_argument("--tasks", help="comma-separated ids or bNN prefixes (default: all)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="a pinned local model")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="s per task")
    parser.add_argument(
        "--agent-slots",
        type=int,
        default=LOCAL_CANDIDATES,
        help="agent slots of the server (Cadenza's local default)",
    )
    parser.add_argument("--aider-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep workspaces and logs here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # A stopped run (kill, a CI's timeout) stops its llama-server too, as Ctrl-C does.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    console = Console(width=None if sys.stdout.isatty() else 160)
    if installed_version(args.aider_venv) is None:
        console.print(
            f"[red]aider is not installed in {args.aider_venv}: "
            f"python -m benchmarks.humaneval.aider_run --install --venv {args.aider_venv}[/]"
        )
        return 2
    try:
        tasks = load_tasks(args.tasks.split(",") if args.tasks else None, args.task_set)
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/]")
        return 2
    saved: list[Path] = []

    def checkpoint(report: dict[str, Any]) -> None:
        saved[:] = [save(report, args.results_dir)]

    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    holder = (
        contextlib.nullcontext(tempfile.mkdtemp(prefix="aider-", dir=args.keep))
        if args.keep is not None
        else tempfile.TemporaryDirectory(prefix="aider-agent-tasks-")
    )
    with holder as scratch:
        report = asyncio.run(
            run_all(
                tasks,
                model=args.model,
                task_set=args.task_set,
                timeout=args.timeout,
                aider_venv=args.aider_venv,
                scratch=Path(scratch),
                agent_slots=args.agent_slots,
                console=console,
                checkpoint=checkpoint,
            )
        )
    print(markdown(report))
    if saved:
        console.print(f"saved {saved[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
