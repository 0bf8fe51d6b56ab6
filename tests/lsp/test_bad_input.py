"""Malformed input over stdio: raw frames to a real ``cadenza serve``.

Bad requests get a JSON-RPC error response with their id (JSON-RPC 2.0 §5.1), bad framing is
skipped, and the server keeps answering afterwards. Every read has a timeout so a regression fails
rather than hangs.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.lsp.harness import file_uri, server_env
from tests.support.fake_openai import FakeOpenAI

TIMEOUT = 10.0


def frame(message: Any) -> bytes:
    """``message`` (JSON value or raw body bytes) framed with a Content-Length header."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    """A ``cadenza serve`` subprocess spoken to in raw bytes."""

    def __init__(self, process: asyncio.subprocess.Process, root: Path) -> None:
        self.process = process
        self.root = root

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def _read_message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = None
        while True:
            line = await self.process.stdout.readline()
            assert line, "server closed stdout"
            if not line.strip():
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def response(self) -> dict[str, Any]:
        """The next response (server requests and notifications are skipped)."""

        async def read() -> dict[str, Any]:
            while True:
                message = await self._read_message()
                if "method" not in message:
                    return message

        return await asyncio.wait_for(read(), TIMEOUT)

    async def request(self, msg_id: int, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(frame(message))
        response = await self.response()
        assert response.get("id") == msg_id, response
        return response

    async def initialize(self, msg_id: int = 1000) -> None:
        params = {"processId": None, "rootUri": file_uri(self.root), "capabilities": {}}
        response = await self.request(msg_id, "initialize", params)
        assert response["result"]["serverInfo"]["name"] == "cadenza"
        await self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    async def shutdown_and_exit(self) -> int:
        response = await self.request(1001, "shutdown")
        assert "error" not in response, response
        await self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        return await asyncio.wait_for(self.process.wait(), TIMEOUT)


@pytest_asyncio.fixture
async def server(fake: FakeOpenAI, workspace: Path, tmp_path: Path) -> AsyncIterator[RawServer]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cadenza",
        "serve",
        "--log-level",
        "WARNING",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=server_env(fake.base_url, tmp_path / "home"),
    )
    try:
        yield RawServer(process, workspace)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


EXECUTE = "workspace/executeCommand"


@pytest.mark.parametrize(
    ("message", "expected_id", "code"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": EXECUTE, "params": "hello"}, 1, -32602),
        ({"jsonrpc": "2.0", "id": 2, "method": EXECUTE, "params": [1, 2]}, 2, -32602),
        ({"jsonrpc": "2.0", "id": "three", "method": EXECUTE}, "three", -32602),
        ({"id": 4, "method": "shutdown"}, 4, -32600),
        ({"jsonrpc": "1.0", "id": 5, "method": "shutdown"}, 5, -32600),
        ({"jsonrpc": "2.0", "id": 6, "method": 42}, 6, -32600),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}, None, -32600),
        ({"jsonrpc": "2.0", "id": 7}, 7, -32600),
        ({"jsonrpc": "2.0", "id": 8, "method": "no/suchMethod"}, 8, -32601),
        ([1, 2], None, -32600),
        ("text", None, -32600),
    ],
)
async def test_bad_request_gets_error_response(
    server: RawServer, message: Any, expected_id: Any, code: int
) -> None:
    await server.initialize()
    await server.send(frame(message))
    response = await server.response()
    assert response["jsonrpc"] == "2.0"
    assert "id" in response and response["id"] == expected_id, response
    assert response["error"]["code"] == code, response
    assert await server.shutdown_and_exit() == 0


async def test_command_arguments_that_are_no_array_are_named(server: RawServer) -> None:
    # pygls's converter took the string's characters as the arguments: "... got 8".
    await server.initialize()
    params = {"command": "cadenza.startSession", "arguments": "notalist"}
    response = await server.request(9, EXECUTE, params)
    assert response["error"] == {
        "code": -32602,
        "message": "Invalid Params: cadenza.startSession: "
        "arguments must be an array (of one object), got a string",
    }
    assert await server.shutdown_and_exit() == 0


@pytest.mark.parametrize("body", [b"{not json", b"", b"\xff\xfe", b'{"jsonrpc": "2.0", "id": 1'])
async def test_invalid_json_gets_parse_error(server: RawServer, body: bytes) -> None:
    await server.send(frame(body))
    response = await server.response()
    assert response == {"jsonrpc": "2.0", "id": None, "error": response["error"]}
    assert response["error"]["code"] == -32700
    await server.initialize()
    assert await server.shutdown_and_exit() == 0


async def test_bad_notifications_get_no_response(server: RawServer) -> None:
    await server.initialize()
    for message in (
        {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": "x"},
        {"method": "initialized"},
        {"jsonrpc": "2.0", "method": 42},
        {"jsonrpc": "2.0", "method": "no/suchNotification"},
    ):
        await server.send(frame(message))
    # The next response is the shutdown's: nothing answered the notifications.
    assert await server.shutdown_and_exit() == 0


@pytest.mark.parametrize(
    "garbage",
    [
        b"Content-Length: 99999999999\r\n\r\n",
        b"Content-Length: 99999999999\r\n\r\n{}",
        b'Content-Type: application/json\r\n\r\n{"jsonrpc": "2.0"}',
        b"X-Header: 1\r\n\r\n",
        b"Content-Length: abc\r\n\r\n{}",
        b"\r\n\r\n",
    ],
)
async def test_bad_framing_is_skipped(server: RawServer, garbage: bytes) -> None:
    await server.send(garbage)
    await server.initialize()
    assert await server.shutdown_and_exit() == 0


async def test_short_content_length(server: RawServer) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}).encode()
    await server.send(b"Content-Length: 10\r\n\r\n" + body)
    response = await server.response()
    assert response["id"] is None and response["error"]["code"] == -32700
    await server.initialize()
    assert await server.shutdown_and_exit() == 0
