"""Memory of idle sessions: RSS of one ``cadenza acp`` process holding many of them.

An idle session is one the server keeps between turns: made with ``session/new`` and, with
``turns``, after one short turn (``steps`` read steps through the fake model, then the step
limit ends the turn), waiting for the next prompt. The server is driven over ACP on stdio with
the same minimal client as the peers (``peer.AcpClient``; no ``fs``, so the server reads the
workspace itself). RSS is read from ``/proc`` after one warm-up session (imports, the
provider, the first session's caches) and again after ``sessions`` more; the difference divided
by ``sessions`` is the size of one idle session. RSS counts pages, so small sizes are rounded to
what the allocator kept; the total is what a person's machine pays.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import FakeModel, rss_mb, server_env
from benchmarks.peer import AcpClient

SMALL = "line one\nvalue = alpha\nline three\n"


async def _session(client: AcpClient, ws: Path, name: str, steps: int) -> None:
    session = await client.request("session/new", {"cwd": str(ws), "mcpServers": []})
    if steps:
        task = f"bench-file: {name} bench-script: read"
        prompt = [{"type": "text", "text": task}]
        await client.request(
            "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt}
        )


async def bench_memory(
    model: FakeModel,
    sessions: int = 200,
    steps: int = 2,
    server_command: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """RSS of one ACP server before and after ``sessions`` idle sessions (see the module)."""
    model.reset()
    with tempfile.TemporaryDirectory(prefix="cadenza-mem-", ignore_cleanup_errors=True) as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "cadenza.toml").write_text(
            f'model = "openai/bench"\nmax_steps = {max(1, steps)}\n', encoding="utf-8"
        )
        for i in range(sessions + 1):
            (ws / f"f{i}.txt").write_text(SMALL, encoding="utf-8")
        command = server_command or (sys.executable, "-m", "cadenza", "acp")
        client = await AcpClient.spawn(
            command, ws, server_env(f"{model.base}/v1", Path(tmp) / "home")
        )
        try:
            await client.request(
                "initialize",
                {"protocolVersion": 1, "clientCapabilities": {"terminal": False}},
                timeout=120,
            )
            await _session(client, ws, "f0.txt", steps)
            await asyncio.sleep(1.0)  # background work after the first session settles
            before = rss_mb(client.process.pid)["rss_mb"]
            started = time.monotonic()
            for i in range(1, sessions + 1):
                await _session(client, ws, f"f{i}.txt", steps)
            wall = time.monotonic() - started
            gc.collect()
            await asyncio.sleep(1.0)
            after = rss_mb(client.process.pid)
        finally:
            await client.close()
    per_session_kb = (after["rss_mb"] - before) * 1024 / sessions
    return {
        "sessions": sessions,
        "steps_per_session": steps,
        "rss_mb_one_session": before,
        "rss_mb_all_sessions": after["rss_mb"],
        "peak_rss_mb": after["peak_rss_mb"],
        "idle_session_kb": round(per_session_kb, 1),
        "wall_s": round(wall, 2),
        "model_requests": model.stats()["requests"],
    }
