"""Does a completion slot cost the agent, and does a completion wait behind an agent step?

Starts llama-server with one slot (``-np 1``) and then with Cadenza's two slots on a unified KV
cache, and times on each: an agent-like chat request alone, an ``/infill`` alone, and the two
together (the infill sent while the chat request generates). Then times ``cadenza complete``
against the second server (process start included) beside the raw ``/infill`` time.

    python -m benchmarks.completion_slots [--model qwen2.5-coder-1.5b] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from cadenza.host.completion_context import CompletionBudget, Cursor, infill_request
from cadenza.providers.infill import InfillClient
from cadenza.providers.llama_server import LlamaServer
from cadenza.providers.models import model_path

SOURCE = Path(__file__).resolve().parents[1] / "examples" / "inventory" / "inventory.py"
CHAT = {
    "messages": [
        {"role": "system", "content": "You are a coding agent. " * 40},
        {"role": "user", "content": "Explain what a Python list comprehension is."},
    ],
    "max_tokens": 64,
    "temperature": 0,
    "cache_prompt": True,
}


def cursor() -> Cursor:
    text = SOURCE.read_text() if SOURCE.is_file() else "def f(x):\n    return x\n" * 30
    lines = text.split("\n")
    line = len(lines) // 2
    return Cursor(text=text, line=line, column=len(lines[line]))


async def chat(http: httpx.AsyncClient) -> float:
    started = time.monotonic()
    response = await http.post("/v1/chat/completions", json=CHAT, timeout=600)
    response.raise_for_status()
    return time.monotonic() - started


async def infill(client: InfillClient) -> float:
    request = infill_request(cursor(), (), CompletionBudget(timeout_s=600))
    started = time.monotonic()
    await client.infill(request)
    return time.monotonic() - started


async def measure(model: Path, extra: tuple[str, ...], runs: int) -> dict[str, float]:
    server = await LlamaServer.start(model, ctx_size=4096, extra_args=extra)
    try:
        http = httpx.AsyncClient(base_url=server.base_url, trust_env=False)
        client = InfillClient(server.base_url)
        await chat(http)  # warm both prompts
        await infill(client)
        alone = [await chat(http) for _ in range(runs)]
        infill_alone = [await infill(client) for _ in range(runs)]
        together_chat, together_infill = [], []
        for _ in range(runs):
            step = asyncio.create_task(chat(http))
            await asyncio.sleep(0.5)
            together_infill.append(await infill(client))
            together_chat.append(await step)
        await http.aclose()
        await client.aclose()
    finally:
        await server.stop()
    return {
        "chat_alone_s": statistics.median(alone),
        "infill_alone_s": statistics.median(infill_alone),
        "chat_with_infill_s": statistics.median(together_chat),
        "infill_during_chat_s": statistics.median(together_infill),
    }


async def cli_latency(model: Path, runs: int) -> list[float]:
    server = await LlamaServer.start(model, ctx_size=4096)
    try:
        c = cursor()
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "inventory.py"
            path.write_text(c.text)
            env = {
                "CADENZA_LOCAL_SERVER_URL": server.base_url,
                "CADENZA_MODEL": "local/" + model.stem,
            }
            import os

            env = {**os.environ, **env}
            times = []
            for _ in range(runs + 1):
                started = time.monotonic()
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "cadenza",
                        "complete",
                        str(path),
                        str(c.line + 1),
                        str(c.column + 1),
                    ],
                    env=env,
                    cwd=folder,
                    check=True,
                    capture_output=True,
                )
                times.append(time.monotonic() - started)
            return times[1:]  # the first fills the KV cache
    finally:
        await server.stop()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = model_path(args.model)
    if path is None:
        sys.exit(f"model {args.model} is not pulled")
    one = await measure(path, ("-np", "1", "--no-kv-unified"), args.runs)
    two = await measure(path, (), args.runs)
    cli = await cli_latency(path, args.runs)
    print(json.dumps({"one_slot": one, "two_slots": two, "cadenza_complete_s": cli}, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
