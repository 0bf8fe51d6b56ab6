"""A raw-bytes client of a real ``cadenza serve`` subprocess, for the reliability suites.

Messages are written as bytes on the server's stdin (any framing, valid or not); a reader
thread parses the server's stdout with its own ``Content-Length`` parser (written here, not
pygls's), answers every server → client request with an empty result, and keeps the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

SERVE = [sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING"]


def frame(body: bytes) -> bytes:
    """One well-formed LSP frame."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def message(payload: Any) -> bytes:
    """One well-formed frame holding ``payload`` as JSON."""
    return frame(json.dumps(payload).encode())


@dataclass(frozen=True)
class ErrorAnswer:
    """Returned by an ``answer`` callable: answer the server's request with this error."""

    code: int
    message: str


NO_REPLY = object()
"""Returned by an ``answer`` callable: send nothing (the test answers by hand)."""


class FrameError(Exception):
    """The server wrote something that is not an LSP frame."""


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One frame's body from ``stream`` (None at end of stream); strict: any oddity raises."""
    length: int | None = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, sep, value = line.decode("ascii").partition(":")
        if not sep or not line.endswith(b"\r\n"):
            raise FrameError(f"bad header line {line!r}")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None or length < 0:
        raise FrameError("no Content-Length")
    body = stream.read(length)
    if len(body) != length:
        return None
    return body


class RawServer:
    """``cadenza serve`` over pipes, with every message it wrote kept in order."""

    def __init__(
        self,
        env: dict[str, str],
        *,
        stderr_path: Path | None = None,
        log_level: str = "WARNING",
        answer: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self._stderr_file = open(stderr_path, "wb") if stderr_path else None  # noqa: SIM115
        self.answer = answer or (lambda request: None)
        """The result (or ``ErrorAnswer``) sent back for each server → client request."""
        self.proc = subprocess.Popen(
            [*SERVE[:-1], log_level],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr_file or subprocess.DEVNULL,
            env=env,
        )
        self.responses: dict[Any, dict[str, Any]] = {}
        self.null_id_errors = 0
        self.notifications: list[dict[str, Any]] = []
        self.frame_errors: list[str] = []
        self.raw_bodies: list[bytes] = []
        self._cond = threading.Condition()
        self._out: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._writer = threading.Thread(target=self._write, daemon=True)
        self._writer.start()
        self.eof = False

    # reading -------------------------------------------------------------------------
    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while True:
                try:
                    body = read_frame(stdout)
                except (FrameError, ValueError, UnicodeDecodeError) as exc:
                    with self._cond:
                        self.frame_errors.append(str(exc))
                        self._cond.notify_all()
                    continue
                if body is None:
                    break
                self._on_body(body)
        finally:
            with self._cond:
                self.eof = True
                self._cond.notify_all()

    def _on_body(self, body: bytes) -> None:
        try:
            msg = json.loads(body)
        except ValueError:
            with self._cond:
                self.frame_errors.append(f"not JSON: {body[:200]!r}")
                self._cond.notify_all()
            return
        with self._cond:
            self.raw_bodies.append(body)
            if "method" in msg and "id" in msg:  # a server → client request: answer it
                result = self.answer(msg)
                if result is NO_REPLY:
                    pass
                elif isinstance(result, ErrorAnswer):
                    error = {"code": result.code, "message": result.message}
                    self.reply({"jsonrpc": "2.0", "id": msg["id"], "error": error})
                else:
                    self.reply({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                self.notifications.append(msg)
            elif "method" in msg:
                self.notifications.append(msg)
            elif msg.get("id") is None:
                self.null_id_errors += 1
            else:
                self.responses[msg["id"]] = msg
            self._cond.notify_all()

    # writing -------------------------------------------------------------------------
    def _write(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        while True:
            data = self._out.get()
            if data is None:
                break
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, OSError):
                break

    def reply(self, payload: dict[str, Any]) -> None:
        """Send the client's answer to a server → client request."""
        self.send(message(payload))

    def send(self, data: bytes) -> None:
        """Queue bytes for the server's stdin (written by a thread, so never blocks here)."""
        self._out.put(data)

    def send_all(self, chunks: Iterable[bytes]) -> None:
        self.send(b"".join(chunks))

    def close_stdin(self) -> None:
        self._out.put(None)
        self._writer.join(5)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    # waiting -------------------------------------------------------------------------
    def wait_for(self, ids: Iterable[Any], timeout: float) -> set[Any]:
        """Wait until every id has a response; return the ids still missing."""
        wanted = set(ids)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                missing = wanted - self.responses.keys()
                left = deadline - time.monotonic()
                if not missing or left <= 0 or self.eof:
                    return missing
                self._cond.wait(left)

    def request(self, msg_id: Any, method: str, params: Any, timeout: float = 10.0) -> Any:
        """Send a well-formed request and wait for its response (None on timeout)."""
        self.send(message({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        self.wait_for([msg_id], timeout)
        return self.responses.get(msg_id)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 30.0) -> int | None:
        """Close stdin and wait for the process (killed after ``timeout``: on a loaded 2-core
        machine a clean exit took over 10 s)."""
        self.close_stdin()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(5)
        if self._stderr_file:
            self._stderr_file.close()
        return code

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._out.put(None)
        if self._stderr_file:
            self._stderr_file.close()


def initialize_params(root: Path, **extra: Any) -> dict[str, Any]:
    uri = root.as_uri()
    return {
        "processId": os.getpid(),
        "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": root.name}],
        "capabilities": {},
        **extra,
    }
