"""Step overhead of one session on both faces, with the editor round trip; optionally beside
older source trees, alternating in one run.

LSP face: ``cadenza serve`` driven by the headless client (``driver.run_sessions``), every
``edit_file`` a ``workspace/applyEdit`` the client process answers by writing the file. ACP
face: ``cadenza acp`` driven by ``peer.AcpClient`` declaring ``fs`` (``acp_driver``), every
read and edit going through ``fs/read_text_file`` / ``fs/write_text_file`` answered by the
client. The model script is ``rw`` (``read_file`` and ``edit_file`` alternating on a small file).

For each face and server: step overhead median/p90/p99 over every step of every round, and
server CPU per step: user + system time of the server process (all its threads, ``/proc/PID/
stat``, read by the fake model as each model request arrives) from the session's first model
request to its last, summed over the rounds, divided by the steps in between; the server's
start-up and the session's creation are outside it. ``/proc`` counts in ticks of 10 ms, so a
run's CPU is ±10 ms (±0.03 ms a step over 300 steps). The trees run in turn within each
round, their order rotating from round to round, so a load change falls on all of them alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.common import FakeModel, percentiles_ms, server_from, table
from benchmarks.concurrency import run_face

HEADS = ("face", "server", "steps", "median ms", "p90 ms", "p99 ms", "max ms", "CPU ms/step")


async def bench_steps(
    model: FakeModel,
    trees: dict[str, Path],
    *,
    steps: int,
    rounds: int,
    faces: tuple[str, ...] = ("lsp", "acp"),
) -> dict[str, Any]:
    """``rounds`` rounds of each face and source tree: one session of ``steps`` steps each."""
    names = list(trees)
    gaps: dict[tuple[str, str], list[int]] = {(f, n): [] for f in faces for n in names}
    cpu_s: dict[tuple[str, str], float] = dict.fromkeys(gaps, 0.0)
    counted: dict[tuple[str, str], int] = dict.fromkeys(gaps, 0)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for face in faces:
            for name in order:
                command = server_from(trees[name], "acp" if face == "acp" else "serve")
                run = await run_face(model, face, 1, steps, 0, command, fs=True)
                if run.files_ok != 1:
                    raise RuntimeError(f"{face} {name}: the scripted edits did not all land")
                gaps[(face, name)] += run.gaps_ns
                cpu, between = run.steady_cpu
                cpu_s[(face, name)] += cpu
                counted[(face, name)] += between
            print(f"round {r + 1}/{rounds}, {face}: done", flush=True)
    out: dict[str, Any] = {
        "steps_per_run": steps,
        "rounds": rounds,
        "trees": {name: str(tree) for name, tree in trees.items()},
        "results": [],
    }
    rows = []
    for face, name in gaps:
        stats = percentiles_ms(gaps[(face, name)])
        cpu = round(1000 * cpu_s[(face, name)] / max(1, counted[(face, name)]), 3)
        out["results"].append(
            {"face": face, "server": name, "step_overhead_ms": stats, "server_cpu_ms_per_step": cpu}
        )
        rows.append(
            [face, name, stats["n"], stats["median"], stats["p90"], stats["p99"], stats["max"], cpu]
        )
    print(table(HEADS, rows))
    return out
