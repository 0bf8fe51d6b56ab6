"""HumanEval as implement-from-a-description tasks: Cadenza and aider, interleaved, one server.

    python -m benchmarks.humaneval.run [--limit N] [--tasks he000,he032]
        [--systems cadenza,aider,model] [--variant default] [--model qwen2.5-coder-1.5b]
        [--timeout S] [--aider-venv DIR]
    python -m benchmarks.humaneval.run --show benchmarks/results/humaneval-DATE.json

One llama-server is started the way Cadenza's local provider starts its own (the same GGUF,
context size, threads and flags: ``LlamaServer.start``) and both systems use it: Cadenza through
``CADENZA_LOCAL_SERVER_URL``, aider as an OpenAI-compatible endpoint. The tasks run one after
the other; within a task the two systems take turns going first, so the machine's load falls on
both alike. Cadenza runs through ``cadenza serve`` and the headless client
(``agent_tasks.run.run_one``: private state and config folders, the ``[loop]`` variant written as
the user's config, ``run_command`` allowed as ``cadenza run --allow run_command`` would); its
workspace holds the stub and the tests. aider's holds the stub only (``aider_run``). After each,
the harness runs the tests on the result in a clean copy (``judge``). The report goes to
``benchmarks/results/humaneval[-VARIANT]-DATE.json`` after every task, so a stopped run keeps what
it measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from benchmarks.agent_tasks.observe import LogSlice
from benchmarks.agent_tasks.run import VARIANTS, Variant, machine_info, run_one
from benchmarks.aider_peer.harness import DEFAULT_VENV, AiderSetup, installed_version, make_setup
from benchmarks.humaneval import report as reports
from benchmarks.humaneval.aider_run import run_aider
from benchmarks.humaneval.judge import HumanEvalTask, build_tasks
from benchmarks.humaneval.model_alone import run_model_alone
from benchmarks.humaneval.problems import load_problems, select
from cadenza.config import LOCAL_CANDIDATES, CadenzaConfig
from cadenza.providers.llama_server import LlamaServer
from cadenza.providers.local import DEFAULT_MAX_TOKENS, ENV_SHARED_SERVER
from cadenza.providers.models import model_path

SYSTEMS = ("cadenza", "aider", "model")
"""``model`` is the model alone: one request per problem (``model_alone``)."""
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_TIMEOUT_S = 600.0
"""Per system and task (the issue's measurement stopped exercises at 10 minutes too)."""
RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"


async def run_cadenza(
    task: HumanEvalTask,
    *,
    model: str,
    variant: Variant,
    max_steps: int | None,
    timeout: float,
    folder: Path,
    log: Path,
) -> dict[str, Any]:
    """One Cadenza session on ``task``; the harness's judgement of its result."""
    folder.mkdir(parents=True)
    piece = LogSlice(log)
    result = await run_one(
        task,
        model=f"local/{model}",
        variant=variant,
        max_steps=max_steps,  # type: ignore[arg-type]  # None: the server's default
        timeout=timeout,
        scratch=folder,
        allow_commands=True,
    )
    judgement = task.judge(folder / task.id / "workspace")
    return {
        "passed": judgement.passed,
        "tests_passed": judgement.tests_passed,
        "tests_total": judgement.tests_total,
        "reason": judgement.reason,
        "wall_s": result.wall_s,
        "total_s": result.total_s,
        "stop_reason": result.stop_reason,
        "steps": result.steps,
        "tool_calls": result.tool_calls,
        "tools": result.tools,
        "tokens": piece.save(folder / "llama-server.log") or result.tokens,
        "final_message": result.final_message,
        "error": result.error,
    }


async def run_aider_task(
    task: HumanEvalTask, *, setup: AiderSetup, timeout: float, folder: Path, log: Path
) -> dict[str, Any]:
    """aider's two tries on ``task``; the harness's judgement of its result."""
    folder.mkdir(parents=True)
    piece = LogSlice(log)
    run = await asyncio.to_thread(
        run_aider, setup, task_folder=task.folder, text=task.text, folder=folder, timeout=timeout
    )
    return {
        "passed": run.judgement.passed,
        "tests_passed": run.judgement.tests_passed,
        "tests_total": run.judgement.tests_total,
        "reason": run.judgement.reason,
        "wall_s": run.wall_s,
        "total_s": run.total_s,
        "stop_reason": run.stop_reason,
        "tries": run.tries,
        "passed_first_try": bool(run.tries and run.tries[0].get("passed")),
        "tokens": piece.save(folder / "llama-server.log"),
        "error": run.error,
    }


def _order(n: int, systems: list[str]) -> list[str]:
    """Who goes first alternates from task to task."""
    return systems if n % 2 == 0 else list(reversed(systems))


async def run_all(
    tasks: list[HumanEvalTask],
    *,
    systems: list[str],
    model: str,
    variant: Variant,
    max_steps: int | None,
    timeout: float,
    aider_venv: Path,
    scratch: Path,
    console: Console,
    save: Any,
    agent_slots: int = 1,
) -> dict[str, Any]:
    """Start the server, run every task with every system, return the report."""
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
    os.environ[ENV_SHARED_SERVER] = server.base_url  # run_one passes os.environ to the server
    report = reports.new_report(
        model=model,
        model_file=str(path),
        variant=variant,
        systems=systems,
        timeout=timeout,
        max_steps=max_steps,
        machine=machine_info(),
        server={"ctx_size": ctx_size, "n_ctx": server.n_ctx, "build": server.build},
        aider_version=installed_version(aider_venv) if "aider" in systems else None,
        tasks_planned=len(tasks),
    )
    try:
        for n, task in enumerate(tasks):
            row: dict[str, Any] = {"task": task.id, "order": _order(n, systems), "systems": {}}
            row["started"] = reports.snapshot()
            for system in row["order"]:
                folder = scratch / task.id / system
                if system.startswith("cadenza"):
                    # ``cadenza:VARIANT`` runs that variant beside the others in the same run.
                    _, _, named = system.partition(":")
                    result = await run_cadenza(
                        task,
                        model=model,
                        variant=VARIANTS[named] if named else variant,
                        max_steps=max_steps,
                        timeout=timeout,
                        folder=folder,
                        log=log,
                    )
                elif system == "model":
                    folder.mkdir(parents=True)
                    piece = LogSlice(log)
                    result = await asyncio.to_thread(
                        run_model_alone,
                        task,
                        base_url=server.base_url,
                        model=model,
                        max_tokens=DEFAULT_MAX_TOKENS,
                        timeout=timeout,
                        folder=folder / "run",
                    )
                    result["tokens"] = piece.save(folder / "llama-server.log") or result["tokens"]
                else:
                    result = await run_aider_task(
                        task, setup=setup, timeout=timeout, folder=folder, log=log
                    )
                row["systems"][system] = result
                mark = "[green]pass[/]" if result["passed"] else "[red]fail[/]"
                console.print(
                    f"[{n + 1}/{len(tasks)}] {task.id} {system}: {mark} {result['reason']}, "
                    f"{result['stop_reason']}, {result['wall_s']:.0f} s"
                )
            report["results"].append(row)
            reports.finish(report)
            save(report)
    finally:
        os.environ.pop(ENV_SHARED_SERVER, None)
        await server.stop()
    return report


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.humaneval.run", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument("--tasks", help="comma-separated ids (he032, 32, HumanEval/32, all)")
    parser.add_argument("--limit", type=int, help="the first N tasks of the selection")
    parser.add_argument(
        "--systems",
        default="cadenza,aider",
        help="cadenza,aider,model (the model alone); cadenza:VARIANT adds a loop variant",
    )
    parser.add_argument("--variant", default="default", choices=sorted(VARIANTS))
    parser.add_argument("--model", default=DEFAULT_MODEL, help="a pinned local model")
    parser.add_argument("--max-steps", type=int, help="Cadenza's steps (default: the server's)")
    parser.add_argument(
        "--agent-slots",
        type=int,
        default=LOCAL_CANDIDATES,
        help="agent slots of the one server (a variant with N candidates: N)",
    )
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="s per system")
    parser.add_argument("--aider-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep workspaces and logs here")
    parser.add_argument("--show", type=Path, metavar="JSON", help="print a saved report")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 160)
    if args.show is not None:
        reports.print_report(console, reports.load(args.show))
        return 0
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(
        s
        for s in systems
        if s not in SYSTEMS and not (s.startswith("cadenza:") and s[8:] in VARIANTS)
    )
    if unknown or not systems:
        console.print(f"[red]unknown systems: {', '.join(unknown)}; known: {', '.join(SYSTEMS)}[/]")
        return 2
    if "aider" in systems and installed_version(args.aider_venv) is None:
        console.print(
            f"[red]aider is not installed in {args.aider_venv}: "
            f"python -m benchmarks.humaneval.aider_run --install --venv {args.aider_venv}[/]"
        )
        return 2
    try:
        problems = select(load_problems(), args.tasks.split(",") if args.tasks else None)
    except (KeyError, RuntimeError) as exc:
        console.print(f"[red]{exc.args[0]}[/]")
        return 2
    if args.limit is not None:
        problems = problems[: args.limit]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = "humaneval" if args.variant == "default" else f"humaneval-{args.variant}"
    out = args.results_dir / f"{name}-{stamp}.json"

    def save(report: dict[str, Any]) -> None:
        reports.save(report, out)

    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    holder = (
        contextlib.nullcontext(tempfile.mkdtemp(prefix="humaneval-", dir=args.keep))
        if args.keep is not None
        else tempfile.TemporaryDirectory(prefix="humaneval-")
    )
    started = time.monotonic()
    with holder as scratch:
        tasks = build_tasks(problems, Path(scratch) / "tasks")
        report = asyncio.run(
            run_all(
                tasks,
                systems=systems,
                model=args.model,
                variant=VARIANTS[args.variant],
                max_steps=args.max_steps,
                timeout=args.timeout,
                aider_venv=args.aider_venv,
                scratch=Path(scratch),
                console=console,
                save=save,
                agent_slots=args.agent_slots,
            )
        )
    reports.print_report(console, report)
    console.print(f"saved {out} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
