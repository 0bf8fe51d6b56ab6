"""Many sessions in one server, on both faces: step overhead, server CPU, and starvation.

Every session of a level starts at once (``driver.run_sessions`` for ``cadenza serve`` with
the headless client answering ``workspace/applyEdit``; ``acp_driver.run_acp_sessions`` for
``cadenza acp``, the server writing files itself). ``think_ms`` delays each model reply as a
hosted model would (0: the instant model, every session always ready, so the server is
saturated and a step waits for the steps of all the others: by Little's law the gap is then
about sessions times CPU per step; with a delay, the server has slack and the gap is its own
overhead plus what it queues behind). Starvation: ``driver.fairness`` (``min_share``,
``worst_wait_ms``, ``in_flight_max``).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from benchmarks.acp_driver import run_acp_sessions
from benchmarks.common import FakeModel, percentiles_ms, table
from benchmarks.driver import RunResult, run_sessions

HEADS = (
    "face",
    "server",
    "sessions",
    "think ms",
    "steps",
    "median ms",
    "p90 ms",
    "p99 ms",
    "max ms",
    "server CPU ms/step",
    "in flight",
    "min share",
    "wall s",
)


async def run_face(
    model: FakeModel,
    face: str,
    sessions: int,
    steps: int,
    think_ms: int,
    command: tuple[str, ...] | None = None,
    *,
    fs: bool = False,
) -> RunResult:
    """One run of ``sessions`` sessions on ``face`` (``lsp`` or ``acp``; ``fs``: the ACP
    client answers ``fs/*``, the LSP face always has the client's ``applyEdit``)."""
    if face == "acp":
        return await run_acp_sessions(
            model, sessions=sessions, steps=steps, think_ms=think_ms, server_command=command, fs=fs
        )
    return await run_sessions(
        model, sessions=sessions, steps=steps, think_ms=think_ms, server_command=command
    )


def _row(face: str, server: str, think_ms: int, summary: dict[str, Any]) -> list[Any]:
    o = summary["step_overhead_ms"]
    return [
        face,
        server,
        summary["sessions"],
        think_ms,
        o["n"],
        o["median"],
        o["p90"],
        o["p99"],
        o.get("max", ""),
        summary["server_cpu_ms_per_step"],
        summary.get("in_flight_max", ""),
        summary.get("min_share", ""),
        summary["wall_s"],
    ]


async def bench_concurrency(
    model: FakeModel,
    levels: tuple[tuple[int, int], ...],
    faces: tuple[str, ...] = ("lsp", "acp"),
    think_ms: int = 0,
) -> dict[str, Any]:
    """Each (sessions, steps) level on each face; a table and the summaries."""
    rows, out = [], []
    for face in faces:
        for sessions, steps in levels:
            summary = (await run_face(model, face, sessions, steps, think_ms)).summary()
            summary |= {"face": face, "think_ms": think_ms}
            out.append(summary)
            rows.append(_row(face, "current", think_ms, summary))
            print(table(HEADS, [rows[-1]]), flush=True)
    print()
    print(table(HEADS, rows))
    return {"levels": out, "target_p99_ms_at_200": 10.0}


async def compare_concurrency(
    model: FakeModel,
    trees: dict[str, tuple[Path, Any]],
    *,
    sessions: int,
    steps: int,
    think_ms: int,
    rounds: int,
    faces: tuple[str, ...] = ("lsp", "acp"),
) -> dict[str, Any]:
    """Each tree in turn, ``rounds`` times, per face; gaps pooled, CPU and shares as medians.

    ``trees`` maps a name to (source tree, ``server_from``-like function of (tree, face)).
    """
    out: dict[str, Any] = {}
    rows = []
    for face in faces:
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        gaps: dict[str, list[int]] = {name: [] for name in trees}
        for _ in range(rounds):
            for name, (tree, command_of) in trees.items():
                command = command_of(tree, "acp" if face == "acp" else "serve")
                run = await run_face(model, face, sessions, steps, think_ms, command)
                runs[name].append(run.summary())
                gaps[name] += run.gaps_ns
                print(table(HEADS, [_row(face, name, think_ms, runs[name][-1])]), flush=True)
        for name in trees:
            pooled = {
                "sessions": sessions,
                "step_overhead_ms": percentiles_ms(gaps[name]),
                "server_cpu_ms_per_step": _median(runs[name], "server_cpu_ms_per_step"),
                "in_flight_max": min(r.get("in_flight_max", 0) for r in runs[name]),
                "min_share": min(r.get("min_share", 0.0) for r in runs[name]),
                "wall_s": _median(runs[name], "wall_s"),
            }
            out[f"{face}/{name}"] = {"pooled": pooled, "runs": runs[name]}
            rows.append(_row(face, name, think_ms, pooled))
    print()
    print(table(HEADS, rows))
    return {"think_ms": think_ms, "steps": steps, "rounds": rounds, **out}


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 3)
