"""``cadenza serve --ws``: the LSP face over a WebSocket, and who may connect to it.

A real server process and a ``websockets`` client speaking JSON-RPC (one message per frame, as
browser LSP clients do). Pages of other origins and clients without the token are refused
before any message; a loopback page gets a session whose edit arrives as
``workspace/applyEdit``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from tests.lsp.harness import server_env
from tests.support.fake_openai import FakeOpenAI, call, text

WAIT_S = 20.0
TOKEN = "s3cret-token"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def start(
    tmp_path: Path, fake: FakeOpenAI, *args: str, token: str | None = None
) -> subprocess.Popen[bytes]:
    env = server_env(fake.base_url, tmp_path / "home")
    if token is not None:
        env["CADENZA_SERVE_TOKEN"] = token
    command = [sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING", *args]
    return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def open_ws(url: str, origin: str | None) -> ClientConnection:
    """Connect once the server listens (refusals by the server are raised at once)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            return await connect(url, origin=origin, open_timeout=WAIT_S)  # type: ignore[arg-type]
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


@pytest.fixture
async def served(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[tuple[int, Path]]:
    """A server on loopback with the token required; stopped afterwards."""
    port = free_port()
    process = start(tmp_path, fake, "--ws", f"127.0.0.1:{port}", token=TOKEN)
    try:
        yield port, tmp_path
    finally:
        process.kill()
        process.wait(WAIT_S)


async def test_other_origins_and_missing_tokens_are_refused(served: tuple[int, Path]) -> None:
    port, _ = served
    url = f"ws://127.0.0.1:{port}/?token={TOKEN}"
    with pytest.raises(InvalidStatus) as refused:
        await open_ws(url, "https://evil.example")
    assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as refused:
        await open_ws(f"ws://127.0.0.1:{port}/", f"http://localhost:{port}")
    assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus):
        await open_ws(f"ws://127.0.0.1:{port}/?token=wrong", None)


async def _request(ws: ClientConnection, rid: int, method: str, params: Any) -> None:
    await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))


async def test_a_loopback_page_runs_a_session_and_gets_the_edit(
    served: tuple[int, Path], fake: FakeOpenAI
) -> None:
    port, tmp_path = served
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    edit = {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    fake.script(call("edit_file", edit, "e1"), text("done"))
    ws = await open_ws(f"ws://127.0.0.1:{port}/?token={TOKEN}", f"http://localhost:{port}")
    caps = {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}}
    await _request(ws, 1, "initialize", {"rootUri": root.as_uri(), "capabilities": caps})
    seen: list[dict[str, Any]] = []
    ended = False
    async with asyncio.timeout(WAIT_S * 2):
        while not ended:
            frame = await ws.recv()
            assert isinstance(frame, str)  # text frames: browsers give pages strings for them
            message = json.loads(frame)
            seen.append(message)
            if message.get("id") == 1 and "result" in message:
                await ws.send(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
                task = {"task": "edit", "model": "openai/test"}
                start = {"command": "cadenza.startSession", "arguments": [task]}
                await _request(ws, 2, "workspace/executeCommand", start)
            elif message.get("method") == "workspace/applyEdit":
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"applied": True}}
                await ws.send(json.dumps(reply))
            elif message.get("method") == "cadenza/sessionUpdate":
                ended = message["params"]["update"]["sessionUpdate"] == "session_end"
    [started] = [m for m in seen if m.get("id") == 2 and "result" in m]
    assert started["result"]["sessionId"]
    [apply] = [m for m in seen if m.get("method") == "workspace/applyEdit"]
    [change] = apply["params"]["edit"]["documentChanges"]
    assert change["textDocument"]["uri"] == (root / "a.py").as_uri()
    assert [e["newText"] for e in change["edits"]] == ["2"]
    await ws.close()


@pytest.mark.parametrize(
    ("args", "token", "said"),
    [
        (["--ws", "0.0.0.0:{port}"], None, "not a loopback address; add --allow-remote"),
        (["--ws", "0.0.0.0:{port}", "--allow-remote"], None, "needs CADENZA_SERVE_TOKEN set"),
    ],
)
def test_other_interfaces_need_the_flag_and_a_token(
    tmp_path: Path, fake: FakeOpenAI, args: list[str], token: str | None, said: str
) -> None:
    port = free_port()
    process = start(tmp_path, fake, *[a.format(port=port) for a in args], token=token)
    _, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 2
    assert said in stderr.decode()
