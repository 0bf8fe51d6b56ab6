"""Run the agent task set through the real server and record what each session did.

    python -m benchmarks.agent_tasks.run --model local/smollm2-135m [--tasks t01,t02]
        [--set checked] [--allow-commands] [--variant baseline] [--max-steps N] [--timeout S]
        [--results-dir DIR]

Each task's workspace is copied to a temporary folder and driven through ``cadenza serve`` with
the client library (``HeadlessClient``, as ``run_task`` uses it, but keeping the session id: a
session that runs out of time is cancelled and still counted), an observer collecting every
event. Each run
gets private ``XDG_STATE_HOME`` / ``XDG_CONFIG_HOME`` folders, so the session's transcript and
llama-server's log belong to that task alone (see ``observe``). The checker then decides
success. The table is printed and the results saved as JSON under ``results/``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.agent_tasks.observe import (
    count_events,
    count_transcript,
    narration_turns,
    read_usage,
)
from benchmarks.agent_tasks.tasks import SETS, Task, load_tasks
from cadenza.client import ClientError, ClientOptions, FileChange, HeadlessClient
from cadenza.client.events import ClientEvent
from cadenza.client.permissions import PermissionPolicy
from cadenza.client.prompts import DecliningPrompter
from cadenza.providers.models import models_dir
from cadenza.schema.methods import KNOWN_STOP_REASONS

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = Path(__file__).resolve().parent / "results"
DEFAULT_MAX_STEPS = 8
DEFAULT_TIMEOUT_S = 600.0
RUNNER_STOP_REASONS = ("timeout", "client_error")
"""Ends the runner records itself: the task ran out of wall time, or the client failed."""
VALID_STOP_REASONS = frozenset(KNOWN_STOP_REASONS) | frozenset(RUNNER_STOP_REASONS)

UNAVAILABLE = {
    "contract_misses": (
        "counted as replies cut by the token limit (model_reply finish_reason length) plus "
        "fatal ones (an envelope-mode reply that does not parse ends the session with 'returned "
        "no JSON envelope'); the local provider's grammar rules out any other miss"
    ),
    "tokens": (
        "from model_reply updates when the provider reports usage, else from llama-server's "
        "log of the run (print_timing per request)"
    ),
}


@dataclass(frozen=True)
class Variant:
    """A configuration of the loop under test: user config written for the server it starts."""

    name: str
    description: str
    user_config: str = ""
    """``cadenza.toml`` text for the run's private user config folder (empty: none)."""


def _loop(**keys: object) -> str:
    """A user ``cadenza.toml`` with a ``[loop]`` table (every key given: the run does not
    depend on the provider's default)."""
    lines = ["[loop]"]
    for key, value in keys.items():
        text = json.dumps(value) if not isinstance(value, bool) else str(value).lower()
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


LOCAL = {
    "ending": "empty",
    "prime": True,
    "repeats": "observe",
    "stuck_limit": 3,
    "edit": "text",
    "core_tools": True,
    "repair": True,
    "edit_echo": True,
    "syntax_guard": True,
    "done_gate": True,
    "checks": "all",
    "rules": True,
    "intel_tools": ["rename_symbol"],
    "edit_diagnostics": True,
    "test_feedback": True,
    "reply_budget": True,
    "plan": False,
    "candidates": 3,
}
"""The default (``cadenza.engine.variants.LOCAL_LOOP``); the ``local-*`` variants change one knob
of it each."""
TOOLS = {**LOCAL, "ending": "complete", "edit": "old_string"}
"""The small-model loop in tool calls (``edit_file``, the ``complete`` call): the default before
the text format."""
BASELINE = {
    "ending": "empty",
    "prime": False,
    "repeats": "observe",
    "stuck_limit": 0,
    "edit": "all",
    "core_tools": False,
    "repair": False,
    "edit_echo": False,
    "syntax_guard": False,
    "done_gate": False,
    "checks": "off",
    "rules": False,
    "intel_tools": [],
    "edit_diagnostics": False,
    "test_feedback": False,
    "reply_budget": False,
    "plan": False,
    "candidates": 0,
}
"""The loop before the variants (``API_LOOP``): empty list ends, every tool, the stuck note."""


def _variant(name: str, description: str, base: dict[str, object], **changes: object) -> Variant:
    return Variant(name=name, description=description, user_config=_loop(**{**base, **changes}))


VARIANTS = {
    v.name: v
    for v in (
        Variant(
            name="default",
            description="the server's own defaults for the model (no [loop] table written)",
        ),
        _variant("baseline", "empty list ends; all tools; stuck note; no priming", BASELINE),
        _variant(
            "local",
            "code as text (file and SEARCH/REPLACE blocks), a reply without one ends; priming; "
            "tests after each change; repair",
            LOCAL,
        ),
        _variant("local-tools", "local, in tool calls: edit_file, the complete call ends", TOOLS),
        _variant(
            "local-empty", "local-tools, but an empty list ends the turn", TOOLS, ending="empty"
        ),
        _variant("local-noprime", "local, without priming", LOCAL, prime=False),
        _variant(
            "local-run", "local, repeats run again (no note)", LOCAL, repeats="run", stuck_limit=0
        ),
        _variant(
            "local-write", "local-tools, write_file instead of edit_file", TOOLS, edit="write_file"
        ),
        _variant(
            "local-text",
            "the same as local (its name from before the text format was the default)",
            LOCAL,
            edit="text",
            ending="empty",
        ),
        _variant(
            "local-text-candidates3",
            "the same as local-candidates3",
            LOCAL,
            edit="text",
            ending="empty",
            candidates=3,
        ),
        _variant(
            "local-lines",
            "local-tools, replace_lines instead of edit_file",
            TOOLS,
            edit="line_range",
        ),
        _variant("local-norepair", "local, without the cut-reply repair", LOCAL, repair=False),
        _variant("local-noecho", "local, edit results without the echo", LOCAL, edit_echo=False),
        _variant("local-noguard", "local, without the syntax guard", LOCAL, syntax_guard=False),
        _variant("local-nogate", "local, without the done gate", LOCAL, done_gate=False),
        _variant("local-nochecks", "local, without the done checks", LOCAL, checks="off"),
        _variant("local-norules", "local, without the project rules", LOCAL, rules=False),
        Variant(
            name="local-notests",
            description='local, without the test check ([checks] test = "")',
            user_config=_loop(**LOCAL) + '\n[checks]\ntest = ""\n',
        ),
        _variant("local-nointel", "local, no code-intelligence tools", LOCAL, intel_tools=[]),
        _variant(
            "local-nofeedback", "local, tests only at the claim of done", LOCAL, test_feedback=False
        ),
        Variant(
            name="local-nobudget",
            description="local, a flat reply bound, no repeat stop, no time budget",
            user_config="timeBudgetS = 0\n" + _loop(**{**LOCAL, "reply_budget": False}),
        ),
        _variant(
            "local-allintel",
            "local, all four code-intelligence tools",
            LOCAL,
            intel_tools=["find_references", "go_to_definition", "rename_symbol", "diagnostics"],
        ),
        _variant(
            "local-noeditdiag",
            "local, edit results without the new errors",
            LOCAL,
            edit_diagnostics=False,
        ),
        _variant(
            "local-alltools", "local-tools, every tool offered", TOOLS, core_tools=False, edit="all"
        ),
        _variant(
            "local-candidates3",
            "the same as local (its name from before candidates were on by default)",
            LOCAL,
            candidates=3,
        ),
        _variant(
            "local-nocandidates",
            "local, one reply after a failed run (no candidates)",
            LOCAL,
            candidates=0,
        ),
    )
}


@dataclass
class TaskResult:
    """What one task's session did; ``None`` marks a value that could not be observed."""

    task: str
    success: bool
    check_reason: str
    stop_reason: str
    steps: int
    wall_s: float
    """Seconds from startSession to session_end (server start-up not included)."""
    total_s: float
    """Seconds for the whole task: server start, session, shutdown, check."""
    tool_calls: int = 0
    failed_calls: int = 0
    invalid_calls: int = 0
    repeated_calls: int | None = None
    stuck_notes: int = 0
    narration_turns: int | None = None
    replies: int | None = None
    cut_replies: int = 0
    contract_misses: int = 0
    repairs: int = 0
    repairs_recovered: int = 0
    edits_written: int = 0
    files_changed: list[str] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, float] | None = None
    final_message: str = ""
    error: str | None = None
    kind: str = "edit"


def changed_files(changes: tuple[FileChange, ...]) -> list[str]:
    """``<kind> <path>`` of each changed file (paths relative to the workspace), sorted."""
    return sorted(f"{c.kind} {c.path}" for c in changes)


@dataclass
class _Run:
    session_id: str = ""
    stop_reason: str = "client_error"
    steps: int = 0
    wall: float = 0.0
    message: str = ""
    error: str | None = None
    changes: tuple[FileChange, ...] = ()


async def _drive(
    options: ClientOptions,
    text: str,
    events: list[ClientEvent],
    timeout: float,
    allow_commands: bool = False,
) -> _Run:
    """One session through the client library; on timeout it is cancelled (the id is kept).

    ``allow_commands``: permission prompts for ``run_command`` (the model's, and the done
    check's test run) are answered "allow once"; otherwise every prompt is declined.
    """
    run = _Run()
    allowed = PermissionPolicy.build(allow=["run_command"] if allow_commands else [])
    prompter = DecliningPrompter(permissions=allowed)
    try:
        async with HeadlessClient(options, observer=events.append, prompter=prompter) as client:
            run.session_id = await client.start_session(text)
            started = time.monotonic()
            try:
                ended = await asyncio.wait_for(client.wait(), timeout)
            except TimeoutError:
                run.stop_reason, run.error = "timeout", f"no session_end within {timeout:g} s"
                run.wall = time.monotonic() - started
                run.changes = client.changes
                with contextlib.suppress(ClientError):
                    await client.cancel()
                return run
    except ClientError as exc:
        run.error = str(exc)
        return run
    end = ended.outcome
    run.stop_reason, run.steps, run.wall = end.stop_reason, end.steps, ended.wall_time
    run.message, run.changes = end.message, ended.changes
    return run


async def run_one(
    task: Task,
    *,
    model: str,
    variant: Variant,
    max_steps: int,
    timeout: float,
    scratch: Path,
    allow_commands: bool = False,
    max_tokens: int | None = None,
) -> TaskResult:
    """Run ``task`` in a fresh copy under ``scratch``; check it; count what happened."""
    folder = scratch / task.id
    workspace = task.copy_workspace(folder / "workspace")
    state, config = folder / "state", folder / "config"
    state.mkdir()
    (config / "cadenza").mkdir(parents=True)
    user_config = variant.user_config
    if max_tokens is not None:  # a top-level key: before the variant's [loop] table
        user_config = f"maxTokens = {max_tokens}\n{user_config}"
    if user_config:
        (config / "cadenza" / "cadenza.toml").write_text(user_config, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CADENZA_MODEL"}
    env.update(
        XDG_STATE_HOME=str(state),
        XDG_CONFIG_HOME=str(config),
        CADENZA_MODELS_DIR=str(models_dir()),
        PYTHONIOENCODING="utf-8",
    )
    options = ClientOptions(
        workspace=workspace,
        model=model,
        max_steps=max_steps,
        env=env,
        start_timeout=180.0,
        shutdown_timeout=30.0,
        review="auto",
        allow=("run_command",) if allow_commands else (),  # as cadenza run --allow passes it
    )
    events: list[ClientEvent] = []
    started = time.monotonic()
    run = await _drive(options, task.text, events, timeout, allow_commands)
    changed = changed_files(run.changes)
    verdict = task.check(workspace)
    counts = count_events(events)
    transcript = count_transcript(state / "cadenza" / "sessions", run.session_id)
    steps = run.steps
    if run.stop_reason == "timeout" and transcript is not None:
        steps = transcript.replies  # no session_end: the replies the model gave so far
    tokens: dict[str, float] | None = None
    usage = read_usage(state / "cadenza" / "log" / "llama-server.log")
    if counts.usage_reported:
        tokens = {
            "requests": counts.replies,
            "prompt_tokens": counts.prompt_tokens,
            "completion_tokens": counts.completion_tokens,
        }
        if usage is not None:  # what the server evaluated; the rest came from its cache
            tokens["prompt_tokens_evaluated"] = usage.prompt_tokens_evaluated
            tokens["prompt_eval_ms"] = usage.prompt_eval_ms
            tokens["eval_ms"] = usage.eval_ms
    elif usage is not None:
        tokens = asdict(usage)
    return TaskResult(
        task=task.id,
        kind=task.kind,
        success=verdict.passed,
        check_reason=verdict.reason,
        stop_reason=run.stop_reason,
        steps=steps,
        wall_s=round(run.wall, 2),
        total_s=round(time.monotonic() - started, 2),
        tool_calls=counts.tool_calls,
        failed_calls=counts.failed_calls,
        invalid_calls=counts.invalid_calls,
        repeated_calls=transcript.repeated_calls if transcript else None,
        stuck_notes=counts.stuck_notes,
        narration_turns=narration_turns(counts, success=verdict.passed),
        replies=counts.replies,
        cut_replies=counts.cut_replies,
        contract_misses=counts.contract_misses,
        repairs=counts.repairs,
        repairs_recovered=counts.repairs_recovered,
        edits_written=counts.edits_written,
        files_changed=changed,
        tools=dict(sorted(counts.tools.items())),
        tokens=tokens,
        final_message=run.message[:300],
        error=run.error,
    )


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def summarize(results: list[TaskResult]) -> dict[str, Any]:
    """Totals over the tasks: done, medians, narration and repeat rates."""
    replies = sum(r.replies or 0 for r in results)
    calls = sum(r.tool_calls for r in results)
    completion = [r.tokens["completion_tokens"] for r in results if r.tokens]
    return {
        "tasks": len(results),
        "done": sum(r.success for r in results),
        "median_steps": _median([r.steps for r in results]),
        "median_wall_s": _median([r.wall_s for r in results]),
        "total_s": round(sum(r.total_s for r in results), 1),
        "narration_turns": sum(r.narration_turns or 0 for r in results),
        "narration_rate": round(sum(r.narration_turns or 0 for r in results) / replies, 3)
        if replies
        else None,
        "repeated_calls": sum(r.repeated_calls or 0 for r in results),
        "repeat_rate": round(sum(r.repeated_calls or 0 for r in results) / calls, 3)
        if calls
        else None,
        "cut_replies": sum(r.cut_replies for r in results),
        "contract_misses": sum(r.contract_misses for r in results),
        "repairs": sum(r.repairs for r in results),
        "repairs_recovered": sum(r.repairs_recovered for r in results),
        "done_per_minute": round(
            sum(r.success for r in results) / (sum(r.wall_s for r in results) / 60), 3
        )
        if any(r.wall_s for r in results)
        else None,
        "completion_tokens": sum(completion) if completion else None,
        "stop_reasons": {
            reason: sum(r.stop_reason == reason for r in results)
            for reason in sorted({r.stop_reason for r in results})
        },
        "by_kind": {
            kind: {
                "tasks": sum(r.kind == kind for r in results),
                "done": sum(r.success for r in results if r.kind == kind),
            }
            for kind in sorted({r.kind for r in results})
        },
    }


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine_info() -> dict[str, Any]:
    """nproc, CPU model, memory, load: the machine is often shared, so the load matters."""
    cpu = platform.processor() or None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "loadavg_start": load,
    }


def build_report(
    *,
    model: str,
    variant: Variant,
    max_steps: int | None,
    timeout: float,
    date: str,
    machine: dict[str, Any],
    planned: int,
    results: list[TaskResult],
    commit: str | None = None,
    task_set: str = "edits",
    allow_commands: bool = False,
) -> dict[str, Any]:
    """The report as a JSON-able dict (``complete`` once every planned task has a result)."""
    return {
        "model": model,
        "task_set": task_set,
        "allow_commands": allow_commands,
        "variant": variant.name,
        "variant_description": variant.description,
        "max_steps": max_steps,
        "timeout_s": timeout,
        "commit": commit,
        "date": date,
        "machine": machine,
        "complete": len(results) == planned,
        "tasks_planned": planned,
        "unavailable": UNAVAILABLE,
        "summary": summarize(results),
        "results": [asdict(r) for r in results],
    }


async def run_tasks(
    tasks: list[Task],
    *,
    model: str,
    variant: Variant,
    max_steps: int,
    timeout: float,
    console: Console | None = None,
    checkpoint: Callable[[dict[str, Any]], object] | None = None,
    keep: Path | None = None,
    task_set: str = "edits",
    allow_commands: bool = False,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """Run every task in order (one server each); the whole report as a JSON-able dict.

    ``checkpoint`` is called with the report so far after each task (the runner saves it, so
    an interrupted run keeps what it measured). ``keep``: a folder that keeps each task's
    workspace, transcript and server logs (default: a temporary folder, removed).
    """
    machine = machine_info()
    date = datetime.now(UTC).isoformat(timespec="seconds")
    commit = _git("rev-parse", "HEAD")  # at the start: others may commit during a long run
    results: list[TaskResult] = []

    def report() -> dict[str, Any]:
        with contextlib.suppress(OSError):
            machine["loadavg_end"] = list(os.getloadavg())
        return build_report(
            model=model,
            variant=variant,
            max_steps=max_steps,
            timeout=timeout,
            date=date,
            machine=machine,
            planned=len(tasks),
            results=results,
            commit=commit,
            task_set=task_set,
            allow_commands=allow_commands,
        )

    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    scratch_dir = (
        contextlib.nullcontext(str(tempfile.mkdtemp(prefix="run-", dir=keep)))
        if keep is not None
        else tempfile.TemporaryDirectory(prefix="cadenza-agent-tasks-")
    )
    with scratch_dir as scratch:
        for n, task in enumerate(tasks, 1):
            result = await run_one(
                task,
                model=model,
                variant=variant,
                max_steps=max_steps,
                timeout=timeout,
                scratch=Path(scratch),
                allow_commands=allow_commands,
                max_tokens=max_tokens,
            )
            results.append(result)
            if checkpoint is not None:
                checkpoint(report())
            if console is not None:
                mark = "[green]pass[/]" if result.success else "[red]fail[/]"
                console.print(
                    f"[{n}/{len(tasks)}] {task.id}: {mark} {result.stop_reason}, "
                    f"{result.steps} steps, {result.wall_s:.1f} s"
                )
                console.file.flush()
    return report()


def save(report: dict[str, Any], results_dir: Path) -> Path:
    """Write the report as ``<model>-<variant>-<date>.json`` in ``results_dir``."""
    results_dir.mkdir(parents=True, exist_ok=True)
    stamp = report["date"].replace("-", "").replace(":", "").replace("+0000", "Z")
    model = report["model"].replace("/", "_")
    task_set = report.get("task_set", "edits")
    prefix = model if task_set == "edits" else f"{model}-{task_set}"
    path = results_dir / f"{prefix}-{report['variant']}-{stamp}.json"
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _opt(value: Any) -> str:
    return "n/a" if value is None else str(value)


def _repairs(row: dict[str, Any]) -> str:
    """``recovered/fired`` of the exactly-once repair (n/a in reports from before it)."""
    if row.get("repairs") is None:
        return "n/a"
    return f"{row.get('repairs_recovered', 0)}/{row['repairs']}"


def table(report: dict[str, Any]) -> Table:
    """The results as a rich table, one row per task and a summary row."""
    out = Table(
        title=f"{report['model']} · {report['variant']}"
        + (f" · max {report['max_steps']} steps" if report["max_steps"] is not None else ""),
        caption=f"commit {str(report['commit'])[:12]} · {report['date']} · "
        f"{report['machine']['nproc']} cores, {report['machine']['cpu']}",
    )
    for name in ("task", "ok", "stop", "steps", "s", "calls", "rep", "narr", "cut", "miss", "fix"):
        out.add_column(name, justify="left" if name in ("task", "stop") else "right")
    out.add_column("out tok", justify="right")
    out.add_column("checker", overflow="fold", max_width=48)
    for r in report["results"]:
        out.add_row(
            r["task"],
            "[green]yes[/]" if r["success"] else "[red]no[/]",
            r["stop_reason"],
            str(r["steps"]),
            f"{r['wall_s']:.0f}",
            str(r["tool_calls"]),
            _opt(r["repeated_calls"]),
            _opt(r["narration_turns"]),
            str(r["cut_replies"]),
            str(r["contract_misses"]),
            _repairs(r),
            _opt(r["tokens"]["completion_tokens"] if r["tokens"] else None),
            r["check_reason"] if r["error"] is None else f"{r['check_reason']} ({r['error']})",
        )
    s = report["summary"]
    out.add_section()
    out.add_row(
        "total",
        f"{s['done']}/{s['tasks']}",
        "",
        f"med {_opt(s['median_steps'])}",
        f"med {_opt(s['median_wall_s'])}",
        "",
        _opt(s["repeated_calls"]),
        _opt(s["narration_turns"]),
        str(s["cut_replies"]),
        str(s["contract_misses"]),
        _repairs(s),
        _opt(s["completion_tokens"]),
        f"narration {_opt(s['narration_rate'])} of replies; "
        f"repeats {_opt(s['repeat_rate'])} of calls",
    )
    return out


def markdown(report: dict[str, Any]) -> str:
    """The per-task results as a Markdown table (for docs/lab/local-model-log.md)."""
    rows = [
        "| task | ok | stop | steps | s | calls | repeated | narration | cut | misses "
        "| repaired | out tokens | checker |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        tokens = r["tokens"]["completion_tokens"] if r["tokens"] else None
        reason = r["check_reason"].replace("|", "/")
        rows.append(
            f"| {r['task']} | {'yes' if r['success'] else 'no'} | {r['stop_reason']} "
            f"| {r['steps']} | {r['wall_s']:.0f} | {r['tool_calls']} | {_opt(r['repeated_calls'])} "
            f"| {_opt(r['narration_turns'])} | {r['cut_replies']} | {r['contract_misses']} "
            f"| {_repairs(r)} | {_opt(tokens)} | {reason} |"
        )
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.agent_tasks.run", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument("--model", default="local/smollm2-135m", help="PROVIDER/MODEL")
    parser.add_argument("--tasks", help="comma-separated ids or tNN prefixes (default: all)")
    parser.add_argument("--set", dest="task_set", default="edits", choices=sorted(SETS))
    parser.add_argument(
        "--allow-commands",
        action="store_true",
        help="answer run_command's permission prompts with allow once (the test check too)",
    )
    parser.add_argument("--variant", default="default", choices=sorted(VARIANTS))
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS)
    parser.add_argument(
        "--max-tokens", type=int, help="completion tokens per model request (default: the model's)"
    )
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per task")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep each task's workspace, transcript and logs"
    )
    parser.add_argument(
        "--show", type=Path, metavar="JSON", help="print a saved report instead of running"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="with --show: print a Markdown table"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Wide enough for the table when the output is a file or a pipe (80 columns otherwise).
    console = Console(width=None if sys.stdout.isatty() else 180)
    if args.show is not None:
        report = json.loads(args.show.read_text(encoding="utf-8"))
        if args.markdown:
            print(markdown(report))
        else:
            console.print(table(report))
        return 0
    try:
        tasks = load_tasks(args.tasks.split(",") if args.tasks else None, args.task_set)
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/]")
        return 2
    if shutil.which("node") is None:
        console.print("[yellow]node is not installed: the JavaScript tasks will fail[/]")
    report = asyncio.run(
        run_tasks(
            tasks,
            model=args.model,
            variant=VARIANTS[args.variant],
            max_steps=args.max_steps,
            timeout=args.timeout,
            console=console,
            checkpoint=lambda partial: save(partial, args.results_dir),
            keep=args.keep,
            task_set=args.task_set,
            allow_commands=args.allow_commands,
            max_tokens=args.max_tokens,
        )
    )
    console.print(table(report))
    path = save(report, args.results_dir)
    console.print(f"saved {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
