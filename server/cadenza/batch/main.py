"""``cadenza batch TASKS.jsonl --out DIR``: read, plan, run on Ray, summarize.

Exit status: 0 every task is ``done``; 1 some task is not (failed, incomplete, crashed), a
line of the task file was skipped, or Ray could not start; 2 a bad command line, an unreadable
task file, or an ``--out`` that cannot hold the batch; 130 interrupted with Ctrl-C (running
sessions cancelled; results written so far are kept and ``--resume`` continues).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import time
from pathlib import Path

from rich.console import Console

from cadenza.batch import raylib
from cadenza.batch.display import BatchDisplay, summary_table
from cadenza.batch.driver import BatchPlan, BatchRun
from cadenza.batch.model_servers import ModelServerError
from cadenza.batch.results import OutDirError, check_out_dir, done_ids, remove_staging
from cadenza.batch.tasks import TaskFile, TaskSpec, read_tasks
from cadenza.batch.worker import WorkerSettings
from cadenza.client.safe_text import visible_markup
from cadenza.config import ConfigError, load_config
from cadenza.providers.registry import http_base_url, resolve_model_name

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
FORWARDED_PREFIXES = ("CADENZA_", "OPENAI_", "ANTHROPIC_", "OLLAMA_", "OPENROUTER_")
"""Variables sent along with each task, so workers on other nodes reach the same provider."""
LOCAL = "local/"


def batch_main(args: argparse.Namespace) -> int:
    """Run ``cadenza batch``; returns the exit status (see the module docstring)."""
    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False)
    task_file, out = Path(args.tasks), Path(args.out)
    try:
        parsed = read_tasks(task_file)
        check_out_dir(out, task_file, resume=args.resume)
    except OSError as exc:
        reason = visible_markup(str(exc.strerror or exc))
        errors.print(f"cadenza batch: error: cannot read {task_file}: {reason}", soft_wrap=True)
        return EXIT_USAGE
    except OutDirError as exc:
        errors.print(f"cadenza batch: error: {visible_markup(str(exc))}", soft_wrap=True)
        return EXIT_USAGE
    for bad in parsed.skipped:
        errors.print(
            f"[yellow]{task_file}:{bad.line}: skipped:[/] {visible_markup(bad.reason)}",
            soft_wrap=True,
        )
    remove_staging(out)
    plan = _plan(args, parsed, out)
    if plan.resumed:
        console.print(f"--resume: {len(plan.resumed)} task(s) already done, skipped")
    logging.getLogger("pygls").setLevel(logging.CRITICAL)
    return _run(console, errors, args.address, plan)


def _plan(args: argparse.Namespace, parsed: TaskFile, out: Path) -> BatchPlan:
    done = done_ids(out) if args.resume else set()
    todo = tuple(t for t in parsed.tasks if t.id not in done)
    settings = WorkerSettings(
        model=_default_model(args.model),
        allow=tuple(args.allow),
        env={k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)},
        session_timeout_s=args.session_timeout,
    )
    return BatchPlan(
        tasks=todo,
        out=out,
        settings=settings,
        max_concurrency=args.max_concurrency or 0,
        retry_crashed=max(0, args.retry_crashed),
        skipped_lines=parsed.skipped,
        resumed=tuple(t.id for t in parsed.tasks if t.id in done),
        model_slots=args.model_slots,
    )


def _default_model(explicit: str | None) -> str | None:
    """``--model``, else the configured default (``CADENZA_MODEL``, the user's cadenza.toml).

    The driver needs the model of every task up front: a local one gets shared servers, a
    hosted one a batch-wide rate limiter. None: the configuration is unreadable (the
    sessions' servers then decide and say what is wrong).
    """
    try:
        return resolve_model_name(explicit, load_config(None))
    except ConfigError:
        return explicit


def _run(console: Console, errors: Console, address: str | None, plan: BatchPlan) -> int:
    if not plan.tasks:  # everything resumed (or nothing to do): no cluster needed
        console.print("nothing to run")
        return EXIT_OK if not plan.skipped_lines else EXIT_SOME_FAILED
    try:
        init = raylib.start(address)
    except (raylib.RayMissingError, ConnectionError, RuntimeError) as exc:
        errors.print(f"cadenza batch: error: {visible_markup(str(exc))}", soft_wrap=True)
        return EXIT_SOME_FAILED
    except KeyboardInterrupt:  # Ctrl-C while the cluster starts: nothing ran yet
        raylib.stop()
        errors.print("interrupted before any task started")
        return EXIT_INTERRUPTED
    actors: list[object] = []
    try:
        try:
            plan, actors = _with_model_servers(console, plan)
            plan = _with_rate_limiters(plan)
        except (ModelServerError, ConfigError) as exc:
            errors.print(f"cadenza batch: error: {visible_markup(str(exc))}", soft_wrap=True)
            return EXIT_SOME_FAILED
        if not plan.max_concurrency:
            plan = dataclasses.replace(plan, max_concurrency=default_concurrency(plan))
        console.print(
            f"ray ready in {init:.1f} s · {len(plan.tasks)} task(s) · "
            f"up to {plan.max_concurrency} at once"
        )
        run = BatchRun(plan=plan, display=BatchDisplay(console, len(plan.tasks)), ray_init_s=init)
        try:
            summary = run.run()
        except KeyboardInterrupt:
            errors.print(
                f"interrupted: {len(run.results)} result(s) kept in {plan.out}; "
                "rerun with --resume to run the rest"
            )
            return EXIT_INTERRUPTED
    except KeyboardInterrupt:  # Ctrl-C while the model servers start
        errors.print("interrupted before any task started")
        return EXIT_INTERRUPTED
    finally:
        raylib.stop_model_servers(actors)
        raylib.stop()
    summary_table(console, run.results, summary.wall_time_s)
    console.print(
        f"{summary.throughput_per_min:.1f} tasks/min · results in {visible_markup(str(plan.out))}"
    )
    all_done = all(r.status == "done" for r in run.results)
    return EXIT_OK if all_done and not plan.skipped_lines else EXIT_SOME_FAILED


def _with_model_servers(console: Console, plan: BatchPlan) -> tuple[BatchPlan, list[object]]:
    """Start one shared llama-server per node for each local model the tasks use.

    Raises:
        ModelServerError: One cannot start (a model not pulled on a node, say).
    """
    models = sorted({m for t in plan.tasks if (m := _model(t, plan.settings)).startswith(LOCAL)})
    if not models:
        return plan, []
    started = time.monotonic()
    slots, actors = raylib.start_model_servers(models, plan.model_slots)
    settings = dataclasses.replace(plan.settings, model_servers=slots.urls())
    console.print(
        f"model servers ready in {time.monotonic() - started:.1f} s · "
        + ", ".join(f"{m} on {len(n)} node(s)" for m, n in slots.served.items())
        + f" · {plan.model_slots} slot(s) each"
    )
    return dataclasses.replace(plan, settings=settings, slots=slots), actors


def _with_rate_limiters(plan: BatchPlan) -> BatchPlan:
    """One batch-wide rate limiter for each hosted HTTP provider the tasks use.

    Raises:
        ConfigError: A provider's base URL cannot be found.
    """
    config = load_config(None)
    upstreams: dict[str, str] = {}
    for task in plan.tasks:
        model = _model(task, plan.settings)
        url = http_base_url(model, config) if "/" in model else None
        if url is not None:
            upstreams.setdefault(model.partition("/")[0], url)
    if not upstreams:
        return plan
    settings = dataclasses.replace(plan.settings, limiters=raylib.start_rate_limiters(upstreams))
    return dataclasses.replace(plan, settings=settings)


def default_concurrency(plan: BatchPlan) -> int:
    """Every slot of the shared model servers when the tasks use a local model, else 2 per CPU.

    A node's llama-server serves its slots at once, and more sessions would only queue there;
    a hosted provider is mostly waited for.
    """
    capacity = plan.slots.capacity()
    if capacity:
        hosted = any(not _model(t, plan.settings).startswith(LOCAL) for t in plan.tasks)
        return capacity + (max(1, int(raylib.cluster_cpus() * 2)) if hosted else 0)
    return max(1, int(raylib.cluster_cpus() * 2))


def _model(task: TaskSpec, settings: WorkerSettings) -> str:
    """The model the task's session runs (the driver resolved the default into settings)."""
    return task.model or settings.model or ""
