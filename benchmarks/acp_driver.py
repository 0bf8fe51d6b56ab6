"""Drive N Cadenza sessions in one ``cadenza acp`` server at once (the ACP face).

The client is the peers' minimal ACP client (``peer.AcpClient``): it allows every permission
request and, with ``fs=True``, declares ``fs.readTextFile``/``fs.writeTextFile`` and answers
them from the disk (the editor round trip of every read and edit); without, the server reads
and writes the workspace itself. All sessions are made with ``session/new`` at once, then
prompted at once; each works on its own file (``f<i>.txt``) with the fake model's script and
stops at ``max_steps``. The step overhead is measured at the fake model, as for the LSP face.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import FakeModel, cpu_seconds, rss_mb, server_env
from benchmarks.driver import SMALL_FILE, RunResult, task_text
from benchmarks.peer import AcpClient


async def _turn(client: AcpClient, ws: Path, text: str, timeout_s: float) -> str:
    session = await client.request("session/new", {"cwd": str(ws), "mcpServers": []}, timeout_s)
    prompt = [{"type": "text", "text": text}]
    params = {"sessionId": session["sessionId"], "prompt": prompt}
    result: dict[str, Any] = await client.request("session/prompt", params, timeout_s)
    return str(result.get("stopReason", ""))


async def run_acp_sessions(
    model: FakeModel,
    *,
    sessions: int,
    steps: int,
    script: str = "rw",
    server_command: tuple[str, ...] | None = None,
    timeout_s: float = 1800,
    think_ms: int = 0,
    fs: bool = False,
) -> RunResult:
    """One ``cadenza acp`` server, ``sessions`` sessions of ``steps`` steps at once."""
    model.reset()
    with tempfile.TemporaryDirectory(prefix="cadenza-acp-", ignore_cleanup_errors=True) as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "cadenza.toml").write_text(
            f'model = "openai/bench"\ncontext_size = 131072\nmax_steps = {steps}\n',
            encoding="utf-8",
        )
        for i in range(sessions):
            (ws / f"f{i}.txt").write_text(SMALL_FILE, encoding="utf-8")
        command = server_command or (sys.executable, "-m", "cadenza", "acp")
        client = await AcpClient.spawn(
            command, ws, server_env(f"{model.base}/v1", Path(tmp) / "home")
        )
        try:
            capabilities: dict[str, Any] = {"terminal": False}
            if fs:
                capabilities["fs"] = {"readTextFile": True, "writeTextFile": True}
            params = {"protocolVersion": 1, "clientCapabilities": capabilities}
            await client.request("initialize", params, timeout=120)
            model.watch(client.process.pid)
            cpu_before = cpu_seconds(client.process.pid)
            started = time.monotonic()
            turns = [
                _turn(client, ws, task_text(i, script, think_ms), timeout_s)
                for i in range(sessions)
            ]
            stops = await asyncio.gather(*turns)
            wall = time.monotonic() - started
            rss = rss_mb(client.process.pid)
            server_cpu = cpu_seconds(client.process.pid) - cpu_before
            if fs and not client.fs_requests:
                raise RuntimeError("the server made no fs/* request of the client")
            edits = steps // 2 if script == "rw" else 0
            want = "value = beta" if edits % 2 else "value = alpha"
            files_ok = sum(
                1 for i in range(sessions) if want in (ws / f"f{i}.txt").read_text("utf-8")
            )
        finally:
            await client.close()
    stats = model.stats()
    reasons: dict[str, int] = {}
    for stop in stops:
        reasons[stop] = reasons.get(stop, 0) + 1
    per_session: dict[str, list[int]] = stats["gaps_ns"]
    return RunResult(
        sessions=sessions,
        steps=steps,
        gaps_ns=[g for values in per_session.values() for g in values],
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
