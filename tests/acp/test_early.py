"""The early ``initialize`` answer of a real ``cadenza acp``: the same bytes the SDK would send.

The agent answers a plain ``initialize`` before it imports the ACP SDK (start-up time); these
tests hold that path to the SDK's: same answer, the client's capabilities still taken, bytes
read past the first line not lost, anything unusual left to the SDK, SIGTERM while waiting.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp
from acp.schema import InitializeResponse

from cadenza.acp.early import PROTOCOL_VERSION, initialize_result
from tests.acp.conftest import WAIT_S
from tests.acp.test_wire import _answer, _spawn

CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


def _initialize(request_id: int, version: int = 1) -> bytes:
    params = {
        "protocolVersion": version,
        "clientCapabilities": CAPS,
        "clientInfo": {"name": "t", "version": "1"},
    }
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    return json.dumps(message).encode() + b"\n"


async def _exchange(tmp_path: Path, *lines: bytes) -> list[dict[str, Any]]:
    """Send ``lines`` in one write; one answer per line; then close stdin."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    process = await _spawn(tmp_path)
    assert process.stdin is not None
    try:
        process.stdin.write(b"".join(lines))
        await process.stdin.drain()
        return [await _answer(process) for _ in lines]
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), WAIT_S)


def test_protocol_version_is_the_sdks() -> None:
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION


def test_initialize_result_is_a_valid_sdk_response() -> None:
    response = InitializeResponse.model_validate(initialize_result(5))
    assert response.protocol_version == 1
    assert response.agent_capabilities is not None and response.agent_capabilities.load_session


async def test_early_answer_equals_the_sdk_paths(tmp_path: Path) -> None:
    # A new client in a fresh home folder is answered early; in a second agent a first line
    # the early reader does not take (an unknown method) sends the initialize that follows
    # down the SDK's path.
    early = await _exchange(tmp_path / "a", _initialize(1, version=3))
    unknown = b'{"jsonrpc":"2.0","id":0,"method":"no/such"}\n'
    sdk = await _exchange(tmp_path / "b", unknown, _initialize(1, version=3))
    assert sdk[0]["error"]["code"] == -32601
    assert early[0] == sdk[1]
    assert early[0]["result"]["protocolVersion"] == 1


async def test_lines_read_with_the_first_reach_the_sdk(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new"}
    new["params"] = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    answers = await _exchange(tmp_path, _initialize(1), json.dumps(new).encode() + b"\n")
    assert answers[0]["id"] == 1 and "result" in answers[0]
    assert answers[1]["id"] == 2 and answers[1]["result"]["sessionId"]


async def test_an_unusual_initialize_is_left_to_the_sdk(tmp_path: Path) -> None:
    odd = b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":1}}\n'
    answers = await _exchange(tmp_path, odd)
    assert "error" in answers[0] or answers[0]["id"] is True


async def test_a_malformed_initialize_still_gets_the_sdks_error(tmp_path: Path) -> None:
    params = {"protocolVersion": 1, "clientCapabilities": {"fs": 5}}
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    answers = await _exchange(tmp_path / "a", line.encode() + b"\n")
    assert "error" in answers[0]
    unknown = b'{"jsonrpc":"2.0","id":0,"method":"no/such"}\n'
    sdk = await _exchange(tmp_path / "b", unknown, line.encode() + b"\n")
    assert answers[0] == sdk[1]  # the very answer the SDK's path gives


def test_a_new_client_is_answered_before_the_sdk_loads(tmp_path: Path) -> None:
    # Only the early reader runs: it must answer, and import neither the SDK nor pydantic.
    code = (
        "import sys; from cadenza.acp.early import answer_early; early = answer_early(); "
        "heavy = {m.split('.')[0] for m in sys.modules} & {'acp', 'pydantic', 'jsonschema'}; "
        "sys.stderr.write(repr((early.initialize is not None, sorted(heavy))))"
    )
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", code], input=_initialize(4), capture_output=True, env=env, timeout=60
    )
    assert done.stderr.decode() == "(True, [])"
    assert json.loads(done.stdout)["result"] == initialize_result(1)


async def _reading_stdin(pid: int, wait_s: float) -> bool:
    """Whether the process blocks in ``read(0, …)`` (its first line), polled for ``wait_s``."""
    for _ in range(int(wait_s / 0.05)):
        try:
            if Path(f"/proc/{pid}/syscall").read_text().startswith("0 0x0 "):
                return True
        except OSError:
            return False
        await asyncio.sleep(0.05)
    return False


async def test_sigterm_before_the_first_line_exits_143(tmp_path: Path) -> None:
    process = await _spawn(tmp_path)
    # Python takes a while to start on a loaded machine: signal once it waits for the client.
    assert await _reading_stdin(process.pid, WAIT_S)
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), WAIT_S) == 143


def test_deeply_nested_json_first_is_a_parse_error_not_a_crash(tmp_path: Path) -> None:
    """``[[[…`` deeper than the JSON parser goes, as the first line: -32700, no traceback."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "c"), "XDG_STATE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "cadenza", "acp"],
        input=b"[" * 3000 + b"\n",
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr.decode(), done.stderr.decode()
    [error] = [json.loads(line) for line in done.stdout.splitlines()]
    assert error["id"] is None and error["error"]["code"] == -32700
