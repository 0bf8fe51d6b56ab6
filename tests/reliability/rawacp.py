"""A raw-bytes client of a real ``cadenza acp`` subprocess, for the reliability suites.

The same bookkeeping as ``rawserver.RawServer`` (responses by id, notifications, the agent's
requests answered by ``answer``), over ACP's framing: newline-delimited JSON-RPC on stdio.
Every line the agent writes must be one JSON object.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.reliability.rawserver import RawServer

ACP = [sys.executable, "-m", "cadenza", "acp", "--log-level", "WARNING"]


def line(payload: Any) -> bytes:
    """One well-formed ACP message line."""
    return json.dumps(payload).encode("utf-8", "surrogatepass") + b"\n"


class RawAcp(RawServer):
    """``cadenza acp`` over pipes, with every message it wrote kept in order."""

    def __init__(
        self,
        env: dict[str, str],
        *,
        cwd: Path,
        stderr_path: Path | None = None,
        answer: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self._stderr_file = open(stderr_path, "wb") if stderr_path else None  # noqa: SIM115
        self.answer = answer or (lambda request: None)
        self.proc = subprocess.Popen(
            ACP,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr_file or subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.responses: dict[Any, dict[str, Any]] = {}
        self.null_id_errors = 0
        self.notifications: list[dict[str, Any]] = []
        self.frame_errors: list[str] = []
        self.raw_bodies: list[bytes] = []
        self._cond = threading.Condition()
        self._out: queue.Queue[bytes | None] = queue.Queue()
        self.eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._writer = threading.Thread(target=self._write, daemon=True)
        self._writer.start()

    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            for raw in stdout:
                body = raw.rstrip(b"\n")
                if not raw.endswith(b"\n"):
                    with self._cond:
                        self.frame_errors.append(f"an unterminated line: {body[:200]!r}")
                    break
                try:
                    parsed = json.loads(body)
                except ValueError:
                    parsed = None
                if not isinstance(parsed, dict):
                    with self._cond:
                        self.frame_errors.append(f"not a JSON object: {body[:200]!r}")
                        self._cond.notify_all()
                    continue
                self._on_body(body)
        finally:
            with self._cond:
                self.eof = True
                self._cond.notify_all()

    def reply(self, payload: dict[str, Any]) -> None:
        self.send(line(payload))

    def request(self, msg_id: Any, method: str, params: Any, timeout: float = 10.0) -> Any:
        self.send(line({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        self.wait_for([msg_id], timeout)
        return self.responses.get(msg_id)
