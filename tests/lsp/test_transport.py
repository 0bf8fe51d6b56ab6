"""``cadenza serve --tcp`` and the exit status of ``cadenza serve``."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.harness import Harness, capabilities, file_uri, make_client, server_env
from tests.support.fake_openai import FakeOpenAI, text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def connect_when_listening(client: LanguageClient, port: int, timeout: float = 10) -> None:
    """Connect once the server listens."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            await client.start_tcp("127.0.0.1", port)
            return
        except OSError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_tcp_transport(fake: FakeOpenAI, workspace: Path, tmp_path: Path) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cadenza",
        "serve",
        "--tcp",
        f"127.0.0.1:{port}",
        "--log-level",
        "WARNING",
        env=server_env(fake.base_url, tmp_path / "home"),
    )
    try:
        client = make_client()
        await connect_when_listening(client, port)
        harness = Harness(client=client, root=workspace)
        harness.install()
        result = await client.initialize_session(
            types.InitializeParams(capabilities=capabilities(), root_uri=file_uri(workspace))
        )
        assert result.server_info is not None and result.server_info.name == "cadenza"
        fake.script(text("over tcp"))
        _, end = await harness.run("hello")
        assert end["stopReason"] == "end_turn"
        assert end["message"] == "over tcp"
        await client.shutdown_async(None)
        client.exit(None)
        assert await asyncio.wait_for(process.wait(), 10) == 0
        await client.stop()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_exit_without_shutdown_is_status_1(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cadenza",
        "serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=server_env(fake.base_url, tmp_path / "home"),
    )
    assert process.stdin is not None
    process.stdin.close()  # the client went away without shutdown/exit
    assert await asyncio.wait_for(process.wait(), 10) == 1
