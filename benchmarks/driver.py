"""Drive N Cadenza sessions in one server through the headless client (a real LSP client).

The server is ``python -m cadenza serve`` spawned over stdio by ``cadenza.client``'s
``HeadlessClient``, which answers ``workspace/applyEdit`` by writing the files on disk. Each
session works on its own file of the workspace (``f<i>.txt``), named in its task for the fake
model (``bench-file:``), which alternates ``read_file`` and ``edit_file`` on it.
"""

from __future__ import annotations

import asyncio
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

    def summary(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "steps_per_session": self.steps,
            "step_overhead_ms": percentiles_ms(self.gaps_ns),
            "wall_s": round(self.wall_s, 2),
            "server_cpu_ms_per_step": round(
                1000 * self.server_cpu_s / max(1, self.sessions * self.steps), 3
            ),
            **self.rss,
            "model_requests": self.requests,
            "model_connections": self.connections,
            "files_edited_as_scripted": f"{self.files_ok}/{self.sessions}",
            "stop_reasons": self.stop_reasons,
        }


async def run_sessions(
    model: FakeModel,
    *,
    sessions: int,
    steps: int,
    script: str = "rw",
    file_text: str = SMALL_FILE,
    server_command: tuple[str, ...] | None = None,
    timeout_s: float = 1800,
) -> RunResult:
    """Start one server, run ``sessions`` sessions of ``steps`` steps at once, collect gaps."""
    model.reset()
    with tempfile.TemporaryDirectory(prefix="cadenza-bench-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "cadenza.toml").write_text(
            'model = "openai/bench"\ncontext_size = 100000000\n', encoding="utf-8"
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
            cpu_before = cpu_seconds(pid)
            started = time.monotonic()
            for i in range(sessions):
                task = f"bench-file: f{i}.txt bench-script: {script}"
                if i == 0:
                    await client.start_session(task)
                    continue
                args = StartSessionArgs(task=task, root_uri=client.root_uri, model="openai/bench")
                params = types.ExecuteCommandParams(command=START_SESSION, arguments=[args.wire()])
                await lsp.workspace_execute_command_async(params)
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
    )
