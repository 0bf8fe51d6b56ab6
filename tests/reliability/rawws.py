"""A raw client of a real ``cadenza serve --ws`` subprocess, for the reliability suites.

The same bookkeeping as ``rawserver.RawServer`` (responses by id, notifications, the server's
requests answered by ``answer``), over one WebSocket: each ``send`` is one frame, text when its
bytes are UTF-8 (or when told), binary otherwise; every frame the server sends must be one
JSON-RPC message.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from tests.reliability.rawserver import RawServer

TOKEN = "fuzz-token"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_ws_server(
    env: dict[str, str], port: int, stderr_path: Path | None = None
) -> subprocess.Popen[bytes]:
    """``cadenza serve --ws 127.0.0.1:PORT`` with the token required."""
    env = {**env, "CADENZA_SERVE_TOKEN": TOKEN}
    command = [sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING"]
    return subprocess.Popen(
        [*command, "--ws", f"127.0.0.1:{port}"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL,
    )


def ws_url(port: int) -> str:
    return f"ws://127.0.0.1:{port}/?token={TOKEN}"


def open_ws(port: int, timeout: float = 60.0) -> ClientConnection:
    """Connect once the server listens; a refusal (an HTTP status) is raised at once."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return connect(ws_url(port), open_timeout=timeout, max_size=None)
        except InvalidStatus:
            raise
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class RawWs(RawServer):
    """One WebSocket client of a ``cadenza serve --ws`` process (``proc``)."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        port: int,
        *,
        answer: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self._stderr_file = None
        self.answer = answer or (lambda request: None)
        self.proc = proc
        self.responses: dict[Any, dict[str, Any]] = {}
        self.null_id_errors = 0
        self.notifications: list[dict[str, Any]] = []
        self.frame_errors: list[str] = []
        self.raw_bodies: list[bytes] = []
        self._cond = threading.Condition()
        self._out: queue.Queue[bytes | None] = queue.Queue()
        self.eof = False
        self.ws = open_ws(port)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._writer = threading.Thread(target=self._write, daemon=True)
        self._writer.start()

    def _read(self) -> None:
        try:
            while True:
                try:
                    data = self.ws.recv()
                except ConnectionClosed:
                    break
                if isinstance(data, bytes):
                    with self._cond:
                        self.frame_errors.append(f"a binary frame: {data[:200]!r}")
                    continue
                self._on_body(data.encode("utf-8"))
        finally:
            with self._cond:
                self.eof = True
                self._cond.notify_all()

    def _write(self) -> None:
        while True:
            data = self._out.get()
            if data is None:
                break
            try:
                if data[:1] == b"\x00":  # binary frame marker (see send_frame)
                    self.ws.send(data[1:])
                else:
                    self.ws.send(data[1:].decode("utf-8"))
            except (ConnectionClosed, OSError, RuntimeError):
                break

    def send_frame(self, body: bytes, *, binary: bool = False) -> None:
        """Queue one frame: text when ``body`` is UTF-8 and not ``binary``."""
        if not binary:
            try:
                body.decode("utf-8")
            except UnicodeDecodeError:
                binary = True
        self._out.put((b"\x00" if binary else b"\x01") + body)

    def send(self, data: bytes) -> None:
        self.send_frame(data)

    def reply(self, payload: dict[str, Any]) -> None:
        self.send_frame(json.dumps(payload).encode())

    def request(self, msg_id: Any, method: str, params: Any, timeout: float = 10.0) -> Any:
        payload = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        self.send_frame(json.dumps(payload).encode())
        self.wait_for([msg_id], timeout)
        return self.responses.get(msg_id)

    def close_stdin(self) -> None:
        self._out.put(None)
        self._writer.join(5)
        with contextlib.suppress(Exception):
            self.ws.close()

    def cut(self) -> None:
        """Drop the TCP connection without a closing handshake (an abrupt disconnect)."""
        self._out.put(None)
        self._writer.join(5)
        with contextlib.suppress(OSError):
            self.ws.socket.shutdown(socket.SHUT_RDWR)
        self.ws.socket.close()

    def stop(self, timeout: float = 10.0) -> int | None:
        self.close_stdin()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(5)
        return code

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._out.put(None)
