"""MCP test set-up: the echo server's settings (stdio), and the echo server over HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cadenza.config.mcp import McpServerConfig

# The LSP harness's and the ACP peer's fixtures (same ``fake`` and ``workspace`` in both).
from tests.acp.conftest import start  # noqa: F401
from tests.lsp.conftest import connect, fake, workspace  # noqa: F401

ECHO = Path(__file__).with_name("server_echo.py")


def echo_server(name: str = "echo", **extra: Any) -> McpServerConfig:
    """The stdio echo server called ``name``."""
    return McpServerConfig.model_validate(
        {"name": name, "command": sys.executable, "args": [str(ECHO)], **extra}
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def http_echo() -> Iterator[str]:
    """The echo server over streamable HTTP: its URL (``.../mcp``)."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ECHO), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP echo server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
