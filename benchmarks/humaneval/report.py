"""The HumanEval run's report: its JSON, the machine's load, and the tables it prints."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.agent_tasks.run import Variant, _git

BUSY_PROCESSES = 8
"""Processes listed (by CPU share) in each snapshot of what else ran."""


def snapshot() -> dict[str, Any]:
    """The load average and the busiest processes (name and CPU share only), now."""
    try:
        load: list[float] | None = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    busy: list[str] = []
    try:
        done = subprocess.run(
            ["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        busy = [" ".join(line.split()) for line in done.stdout.splitlines()[:BUSY_PROCESSES]]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"time": datetime.now(UTC).isoformat(timespec="seconds"), "loadavg": load, "busy": busy}


def new_report(
    *,
    model: str,
    model_file: str,
    variant: Variant,
    systems: list[str],
    timeout: float,
    max_steps: int | None,
    machine: dict[str, Any],
    server: dict[str, Any],
    aider_version: str | None,
    tasks_planned: int,
) -> dict[str, Any]:
    return {
        "benchmark": "humaneval",
        "model": model,
        "model_file": model_file,
        "variant": variant.name,
        "variant_description": variant.description,
        "systems": systems,
        "aider_version": aider_version,
        "timeout_s": timeout,
        "cadenza_max_steps": max_steps,
        "server": server,
        "commit": _git("rev-parse", "HEAD"),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**machine, "start": snapshot()},
        "tasks_planned": tasks_planned,
        "complete": False,
        "summary": {},
        "results": [],
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def summarize(results: list[dict[str, Any]], system: str) -> dict[str, Any]:
    """Pass rate, median wall time, share of tests passing and tokens of one system."""
    rows = [r["systems"][system] for r in results if system in r["systems"]]
    if not rows:
        return {"tasks": 0}
    passed = sum(r["passed"] for r in rows)
    tests = sum(r["tests_total"] for r in rows)
    completion = [
        r["tokens"]["completion_tokens"]
        for r in rows
        if r.get("tokens") and r["tokens"].get("completion_tokens") is not None
    ]
    summary = {
        "tasks": len(rows),
        "passed": passed,
        "pass_rate": round(passed / len(rows), 3),
        "median_wall_s": _median([r["wall_s"] for r in rows]),
        "median_wall_s_passed": _median([r["wall_s"] for r in rows if r["passed"]]),
        "tests_share": round(sum(r["tests_passed"] for r in rows) / tests, 3) if tests else None,
        "completion_tokens": sum(completion) if completion else None,
        "stop_reasons": {
            reason: sum(r["stop_reason"] == reason for r in rows)
            for reason in sorted({r["stop_reason"] for r in rows})
        },
    }
    if system == "aider":
        summary["passed_first_try"] = sum(r.get("passed_first_try", False) for r in rows)
    return summary


def finish(report: dict[str, Any]) -> None:
    """Refresh the summary, the end snapshot and ``complete`` after a task."""
    report["summary"] = {s: summarize(report["results"], s) for s in report["systems"]}
    report["machine"]["end"] = snapshot()
    report["complete"] = len(report["results"]) == report["tasks_planned"]


def save(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return report


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    mark = "[green]pass[/]" if row["passed"] else "[red]fail[/]"
    return (
        f"{mark} {row['tests_passed']}/{row['tests_total']} {row['wall_s']:.0f} s "
        f"{row['stop_reason']}"
    )


def tables(report: dict[str, Any]) -> tuple[Table, Table]:
    """Per task (one column per system), and per system (the summary)."""
    systems = report["systems"]
    tasks = Table(title=f"HumanEval · {report['model']} · Cadenza variant {report['variant']}")
    tasks.add_column("task")
    tasks.add_column("load", justify="right")
    for system in systems:
        tasks.add_column(system)
    for row in report["results"]:
        load = row.get("started", {}).get("loadavg")
        tasks.add_row(
            row["task"],
            f"{load[0]:.1f}" if load else "?",
            *(_cell(row["systems"].get(s)) for s in systems),
        )
    machine = report["machine"]
    loads = [f"{x:.1f}" for x in (machine["start"]["loadavg"] or [])[:1] + _end_load(machine)[:1]]
    summary = Table(
        title="per system",
        caption=f"commit {str(report['commit'])[:12]} · {report['date']} · "
        f"{machine['nproc']} cores · load {' -> '.join(loads)}",
    )
    for name in ("system", "passed", "pass rate", "median s", "median s (passed)", "tests"):
        summary.add_column(name, justify="left" if name == "system" else "right")
    summary.add_column("out tokens", justify="right")
    for system in systems:
        s = report["summary"].get(system, {})
        if not s.get("tasks"):
            continue
        summary.add_row(
            system,
            f"{s['passed']}/{s['tasks']}",
            f"{s['pass_rate']:.0%}",
            str(s["median_wall_s"]),
            str(s["median_wall_s_passed"]),
            f"{s['tests_share']:.0%}" if s["tests_share"] is not None else "n/a",
            str(s["completion_tokens"]),
        )
    return tasks, summary


def _end_load(machine: dict[str, Any]) -> list[float]:
    end = machine.get("end") or {}
    return list(end.get("loadavg") or [])


def print_report(console: Console, report: dict[str, Any]) -> None:
    for table in tables(report):
        console.print(table)
