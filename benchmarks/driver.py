"""Drive N Cadenza sessions in one server through the headless client (a real LSP client).

The server is ``python -m cadenza serve`` spawned over stdio by ``cadenza.client``'s
``HeadlessClient``, which answers ``workspace/applyEdit`` by writing the files on disk. Each
session works on its own file of the workspace (``f<i>.txt``), named in its task for the fake
model (``bench-file:``), which alternates ``read_file`` and ``edit_file`` on it.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from benchmarks.common import FakeModel, cpu_seconds, percentiles_ms, rss_mb, server_env
from cadenza.client import ClientOptions, HeadlessClient
from cadenza.client.events import ClientEvent
from cadenza.schema.commands import StartSessionArgs
from cadenza.schema.methods import START_SESSION
from cadenza.schema.updates import SessionEnd

SMALL_FILE = "line one\nvalue = alpha\nline three\n"


def big_text(size: int) -> str:
    """About ``size`` bytes of lines, the one ``value = alpha`` line in the middle."""
    line = "filler line with some ordinary text in it, nothing to see here.\n"
    half = max(0, size // 2 // len(line))
    return line * half + "value = alpha\n" + line * half


def task_text(i: int, script: str, think_ms: int) -> str:
    """Session ``i``'s task: its file and script, and the model's delay if any."""
    think = f" bench-think-ms: {think_ms}" if think_ms else ""
    return f"bench-file: f{i}.txt bench-script: {script}{think}"


@dataclass
class RunResult:
    """What one server run measured."""

    sessions: int
    steps: int
    gaps_ns: list[int]
    per_session: dict[str, list[int]]
    request_bytes: dict[str, list[int]]
    wall_s: float
    rss: dict[str, float]
    stop_reasons: dict[str, int] = field(default_factory=dict)
    server_cpu_s: float = 0.0
    requests: int = 0
    connections: int = 0
    files_ok: int = 0
    arrivals: dict[str, list[int]] = field(default_factory=dict)
    cpu_at_requests: list[float] = field(default_factory=list)

    @property
    def steady_cpu(self) -> tuple[float, int]:
        """Server CPU seconds from the first model request to the last, and the steps between.

        Start-up and the session's creation are outside it (unlike ``server_cpu_s``).
        """
        cpu = self.cpu_at_requests
        return (cpu[-1] - cpu[0], len(cpu) - 1) if len(cpu) > 1 else (0.0, 0)

    def summary(self) -> dict[str, Any]:
        steady_s, steady_steps = self.steady_cpu
        return {
            "sessions": self.sessions,
            "steps_per_session": self.steps,
            "step_overhead_ms": percentiles_ms(self.gaps_ns),
            "wall_s": round(self.wall_s, 2),
            "server_cpu_ms_per_step": round(
                1000 * self.server_cpu_s / max(1, self.sessions * self.steps), 3
            ),
            "server_cpu_ms_per_step_steady": round(1000 * steady_s / max(1, steady_steps), 3),
            **self.rss,
            "model_requests": self.requests,
            "model_connections": self.connections,
            "files_edited_as_scripted": f"{self.files_ok}/{self.sessions}",
            "stop_reasons": self.stop_reasons,
            **fairness(self.arrivals, self.per_session),
        }


def fairness(arrivals: dict[str, list[int]], gaps: dict[str, list[int]]) -> dict[str, Any]:
    """How many sessions really ran at once, and whether one starved while others ran.

    ``in_flight_max``: the most sessions between their first and last model request at the
    same moment. In the window where every session was running (from the last first request
    to the first last request), the model requests of each session: the fewest, the median and
    the most (``min_share`` = fewest / median; 1.0 is perfectly even, 0 is a starved session).
    ``worst_wait_ms``: the longest single step of any session.
    """
    spans = [(v[0], v[-1]) for v in arrivals.values() if v]
    if not spans:
        return {}
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    running = most = 0
    for _, change in events:
        running += change
        most = max(most, running)
    start, end = max(a for a, _ in spans), min(b for _, b in spans)
    out: dict[str, Any] = {"in_flight_max": most}
    if end > start:
        counts = sorted(sum(start <= t <= end for t in v) for v in arrivals.values())
        median = statistics.median(counts)
        out["all_running_window_s"] = round((end - start) / 1e9, 2)
        out["steps_in_window"] = {"min": counts[0], "median": median, "max": counts[-1]}
        out["min_share"] = round(counts[0] / median, 2) if median else 0.0
    waits = [max(v) for v in gaps.values() if v]
    if waits:
        out["worst_wait_ms"] = round(max(waits) / 1e6, 1)
    return out


async def run_sessions(
    model: FakeModel,
    *,
    sessions: int,
    steps: int,
    script: str = "rw",
    file_text: str = SMALL_FILE,
    server_command: tuple[str, ...] | None = None,
    timeout_s: float = 1800,
    think_ms: int = 0,
) -> RunResult:
    """Start one server, run ``sessions`` sessions of ``steps`` steps at once, collect gaps."""
    model.reset()
    with tempfile.TemporaryDirectory(prefix="cadenza-bench-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "cadenza.toml").write_text(
            'model = "openai/bench"\ncontext_size = 131072\n', encoding="utf-8"
        )
        for i in range(sessions):
            (ws / f"f{i}.txt").write_text(file_text, encoding="utf-8")
        ends: list[SessionEnd] = []
        done = asyncio.Event()

        def observe(event: ClientEvent) -> None:
            if isinstance(event, SessionEnd):
                ends.append(event)
                if len(ends) >= sessions:
                    done.set()

        options = ClientOptions(
            workspace=ws,
            model="openai/bench",
            max_steps=steps,
            server_command=server_command
            or (sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING"),
            env=server_env(f"{model.base}/v1", Path(tmp) / "home"),
            start_timeout=60,
        )
        client = HeadlessClient(options, observer=observe)
        await client.start()
        try:
            lsp = client._lsp
            assert lsp is not None and lsp.process is not None
            pid = lsp.process.pid
            model.watch(pid)
            cpu_before = cpu_seconds(pid)
            started = time.monotonic()
            # All sessions are asked for at once, so they run together (one after the other,
            # the first ones would be done before the last ones start).
            await client.start_session(task_text(0, script, think_ms))

            async def start(i: int) -> None:
                task = task_text(i, script, think_ms)
                args = StartSessionArgs(task=task, root_uri=client.root_uri, model="openai/bench")
                params = types.ExecuteCommandParams(command=START_SESSION, arguments=[args.wire()])
                await lsp.workspace_execute_command_async(params)

            await asyncio.gather(*(start(i) for i in range(1, sessions)))
            await asyncio.wait_for(done.wait(), timeout_s)
            wall = time.monotonic() - started
            rss = rss_mb(pid)
            server_cpu = cpu_seconds(pid) - cpu_before
            # Every edit applied (through the client, on disk): step k (0-based) is an edit
            # for odd k, toggling alpha and beta; the file tells whether all of them landed.
            edits = steps // 2 if script == "rw" else 0
            want = "value = beta" if edits % 2 else "value = alpha"
            files_ok = sum(
                1 for i in range(sessions) if want in (ws / f"f{i}.txt").read_text("utf-8")
            )
        finally:
            await client.close()
    stats = model.stats()
    per_session: dict[str, list[int]] = stats["gaps_ns"]
    gaps = [g for values in per_session.values() for g in values]
    reasons: dict[str, int] = {}
    for end in ends:
        reasons[end.stop_reason] = reasons.get(end.stop_reason, 0) + 1
    return RunResult(
        sessions=sessions,
        steps=steps,
        gaps_ns=gaps,
        per_session=per_session,
        request_bytes=stats["request_bytes"],
        wall_s=wall,
        rss=rss,
        stop_reasons=reasons,
        server_cpu_s=server_cpu,
        requests=stats["requests"],
        connections=stats["connections"],
        files_ok=files_ok,
        arrivals=stats["arrivals_ns"],
        cpu_at_requests=stats["server_cpu_s"],
    )
