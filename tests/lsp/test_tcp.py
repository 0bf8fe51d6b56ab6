"""``cadenza serve --tcp``: who may connect, and that only the first LSP client is served.

A real server process on loopback and raw sockets speaking the LSP base protocol: a port
scan, a web page's ``fetch`` (an HTTP request with a JSON body), and a second editor are
turned away while the first client's session runs, and the server's requests keep going to
the first client.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from cadenza.lsp.tcp import NotTheClient, read_first_frame, take_token
from tests.lsp.harness import server_env
from tests.support.fake_openai import FakeOpenAI, call, text

WAIT_S = 20.0
TOKEN = "tcp-s3cret"
CAPS = {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Peer:
    """One raw TCP connection that speaks LSP framing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> Peer:
        """Connect once the server listens."""
        deadline = asyncio.get_running_loop().time() + WAIT_S
        while True:
            try:
                return cls(*await asyncio.open_connection("127.0.0.1", port))
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.05)

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(frame(message))

    async def receive(self) -> dict[str, Any] | None:
        """The next message, None when the server closed the connection."""
        async with asyncio.timeout(WAIT_S):
            length = None
            while True:
                line = await self.reader.readline()
                if not line:
                    return None
                if line == b"\r\n":
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            assert length is not None
            message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
            return message

    async def closed_unanswered(self) -> bool:
        async with asyncio.timeout(WAIT_S):
            return await self.reader.read() == b""

    def close(self) -> None:
        self.writer.close()


@asynccontextmanager
async def serving(
    tmp_path: Path, fake: FakeOpenAI, *args: str, token: str | None = None
) -> AsyncIterator[tuple[asyncio.subprocess.Process, int]]:
    port = free_port()
    env = server_env(fake.base_url, tmp_path / "home")
    if token is not None:
        env["CADENZA_SERVE_TOKEN"] = token
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "cadenza", "serve", "--tcp", f"127.0.0.1:{port}", *args),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield process, port
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def initialize(root: Path, options: Any = None) -> dict[str, Any]:
    params = {"rootUri": root.as_uri(), "capabilities": CAPS, "initializationOptions": options}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


async def until(peer: Peer, predicate: Any) -> dict[str, Any]:
    """Read ``peer``'s messages up to the first one ``predicate`` accepts."""
    while True:
        message = await peer.receive()
        assert message is not None, "the server closed the client's connection"
        if predicate(message):
            return message


async def fetch_like(port: int, root: Path) -> bool:
    """What a web page's ``fetch`` sends; True when the server closed it unanswered."""
    page = await Peer.open(port)
    body = json.dumps(initialize(root)).encode()
    page.writer.write(
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    return await page.closed_unanswered()


async def test_scans_pages_and_second_clients_never_reach_the_session(
    tmp_path: Path, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 1\n")
    first = {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    second = {"path": "a.py", "old_string": "y = 1", "new_string": "y = 2"}
    fake.script(call("edit_file", first, "e1"), call("edit_file", second, "e2"), text("done"))
    async with serving(tmp_path, fake) as (process, port):
        for _ in range(3):  # a port scan: connect and close
            (await Peer.open(port)).close()
        assert await fetch_like(port, workspace)

        editor = await Peer.open(port)
        editor.send(initialize(workspace))
        assert (await until(editor, lambda m: m.get("id") == 1))["result"]["serverInfo"]
        editor.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        task = {"task": "edit a.py", "model": "openai/test"}
        params = {"command": "cadenza.startSession", "arguments": [task]}
        editor.send(
            {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": params}
        )
        apply = await until(editor, lambda m: m.get("method") == "workspace/applyEdit")

        # While the session waits on the editor: a second editor and a page are turned away.
        intruder = await Peer.open(port)
        intruder.send(initialize(workspace))
        refusal = await intruder.receive()
        assert refusal is not None and "another client is connected" in refusal["error"]["message"]
        assert await intruder.receive() is None
        assert await fetch_like(port, workspace)

        for _ in range(2):  # both edits' requests come to the first editor
            editor.send({"jsonrpc": "2.0", "id": apply["id"], "result": {"applied": True}})
            apply = await until(
                editor,
                lambda m: (
                    m.get("method") == "workspace/applyEdit"
                    or m.get("params", {}).get("update", {}).get("sessionUpdate") == "session_end"
                ),
            )
        assert apply["params"]["update"]["stopReason"] == "end_turn"
        editor.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None})
        await until(editor, lambda m: m.get("id") == 3)
        editor.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
        assert process.stderr is not None
        log = (await process.stderr.read()).decode()
    assert log.count("refused: not an LSP frame: b'POST / HTTP/1.1") == 2
    assert "refused: another client is connected" in log


async def test_with_a_token_the_first_message_must_carry_it(
    tmp_path: Path, fake: FakeOpenAI, workspace: Path
) -> None:
    async with serving(tmp_path, fake, token=TOKEN) as (process, port):
        for options, said in (
            (None, "a token is required (initialize's initializationOptions.token)"),
            ({"token": "guess"}, "a wrong token"),
        ):
            peer = await Peer.open(port)
            peer.send(initialize(workspace, options))
            refusal = await peer.receive()
            assert refusal == {
                "jsonrpc": "2.0",
                "id": 1,
                "error": {"code": -32600, "message": f"refused: {said}"},
            }
            assert await peer.receive() is None
        editor = await Peer.open(port)
        editor.send(initialize(workspace, {"token": TOKEN, "maxSteps": 5}))
        assert (await until(editor, lambda m: m.get("id") == 1))["result"]["serverInfo"]
        editor.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        editor.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
        seen = []
        while (message := await editor.receive()) is not None and message.get("id") != 2:
            seen.append(message)
        # The token was taken out before the options were read: no "unknown setting".
        assert not [m for m in seen if m.get("method") == "window/showMessage"], seen
        editor.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0


@pytest.mark.parametrize(
    ("args", "token", "said"),
    [
        (
            ["--tcp", "0.0.0.0:{port}"],
            None,
            "--tcp 0.0.0.0: not a loopback address; add --allow-remote",
        ),
        (["--tcp", "0.0.0.0:{port}"], TOKEN, "not a loopback address; add --allow-remote"),
        (["--tcp", "[::]:{port}", "--allow-remote"], None, "needs CADENZA_SERVE_TOKEN set"),
        (["--tcp", "0.0.0.0"], None, "--tcp expects HOST:PORT"),
    ],
)
async def test_other_interfaces_need_the_flag_and_a_token(
    tmp_path: Path, fake: FakeOpenAI, args: list[str], token: str | None, said: str
) -> None:
    env = server_env(fake.base_url, tmp_path / "home")
    if token is not None:
        env["CADENZA_SERVE_TOKEN"] = token
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "cadenza", "serve", *[a.format(port=free_port()) for a in args]),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), WAIT_S)
    assert process.returncode == 2
    assert said in stderr.decode()


def reader_of(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=1024)
    reader.feed_data(data)
    reader.feed_eof()
    return reader


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "not an LSP frame: b'GET / HTTP/1.1"),
        (b"\r\nContent-Length: 2\r\n\r\n{}", "a blank first line"),
        (b"Content-Type: x\r\n\r\n{}", "no Content-Length"),
        (b"Content-Length: 2\r\nHost: x\r\n\r\n{}", "not an LSP frame: b'Host: x"),
        (b"Content-Length: 99999999999\r\n\r\n", "Content-Length b'99999999999'"),
        (b"Content-Length: 10\r\n\r\n{}", "closed before a whole LSP frame"),
        (b"Content-Length: 2\r\n", "closed before a whole LSP frame"),
        (b"", "closed before a whole LSP frame"),
        (b"x" * 2000 + b"\r\n", "an overlong first line"),
    ],
)
async def test_first_frames_that_are_not_lsp(data: bytes, why: str) -> None:
    with pytest.raises(NotTheClient, match=why.replace("(", r"\(")) as refused:
        await read_first_frame(reader_of(data))
    assert not refused.value.reply  # nothing is said to a peer that does not speak LSP


async def test_a_first_frame_by_the_book() -> None:
    body = await read_first_frame(
        reader_of(b"Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{}")
    )
    assert body == b"{}"


def test_the_token_is_taken_out_of_the_options() -> None:
    message = initialize(Path("/w"), {"token": TOKEN, "model": "openai/x"})
    body = take_token(json.dumps(message).encode(), TOKEN)
    assert json.loads(body)["params"]["initializationOptions"] == {"model": "openai/x"}
    with pytest.raises(NotTheClient, match="a token is required") as refused:
        take_token(json.dumps({**message, "method": "shutdown"}).encode(), TOKEN)
    assert (refused.value.reply, refused.value.msg_id) == (True, 1)
