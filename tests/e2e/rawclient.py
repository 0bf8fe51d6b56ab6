"""A minimal editor written against the wire alone: LSP framing over a real ``cadenza serve``.

It shares no code with Cadenza's own client except the applier that writes accepted edits to
disk (``WorkspaceEditApplier``, which an editor would replace with its buffers). Every message
in either direction is kept in ``log`` in arrival order, as the JSON that crossed the pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter

from cadenza.client.edits import EditApplied, WorkspaceEditApplier

SERVE = (sys.executable, "-m", "cadenza", "serve")


class RpcError(Exception):
    """The server answered a request with a JSON-RPC error."""


@dataclass
class RawClient:
    """One ``cadenza serve`` process and what crossed its stdio."""

    proc: asyncio.subprocess.Process
    root: Path
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _ended: dict[str, asyncio.Event] = field(default_factory=dict)
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls, *, root: Path, env: dict[str, str], stderr: Path, init_options: dict[str, Any]
    ) -> RawClient:
        """Spawn the server and run ``initialize`` / ``initialized``."""
        with stderr.open("ab") as sink:
            proc = await asyncio.create_subprocess_exec(
                *SERVE,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=sink,
                env=env,
                start_new_session=True,
            )
        client = cls(proc=proc, root=root.resolve())
        client._reader = asyncio.create_task(client._read_loop())
        uri = client.root.as_uri()
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": "e2e-raw-editor"},
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": client.root.name}],
                "initializationOptions": init_options,
                "capabilities": {
                    "workspace": {
                        "applyEdit": True,
                        "workspaceEdit": {
                            "documentChanges": True,
                            "resourceOperations": ["create", "rename", "delete"],
                        },
                        "workspaceFolders": True,
                    },
                    "window": {"workDoneProgress": True},
                    "experimental": {"cadenza": {"askUser": True}},
                },
            },
        )
        await client.notify("initialized", {})
        return client

    # --- framing ----------------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", **message}
        self.log.append(("c2s", message))
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.proc.stdin.drain()

    async def _read_message(self) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        length = None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        assert length is not None, "a frame without Content-Length"
        message: dict[str, Any] = json.loads(await self.proc.stdout.readexactly(length))
        return message

    async def _read_loop(self) -> None:
        while (message := await self._read_message()) is not None:
            self.log.append(("s2c", message))
            if "method" in message and "id" in message:
                await self._answer(message)
            elif "method" in message:
                self._on_notification(message)
            elif (future := self._pending.pop(message.get("id"), None)) is not None:
                future.set_result(message)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server closed its output"))

    # --- messages ---------------------------------------------------------------------------

    async def begin(self, method: str, params: Any) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Send a request; return its id and the future of its whole response."""
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        await self._send({"id": request_id, "method": method, "params": params})
        return request_id, future

    async def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        """Send a request and return its result."""
        _, future = await self.begin(method, params)
        response = await asyncio.wait_for(future, timeout)
        if "error" in response:
            raise RpcError(f"{method}: {response['error']}")
        return response.get("result")

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        await self._send({"method": method, "params": params})

    def _on_notification(self, message: dict[str, Any]) -> None:
        if message["method"] == "cadenza/sessionUpdate":
            params = message["params"]
            if params["update"].get("sessionUpdate") == "session_end":
                self._ended.setdefault(params["sessionId"], asyncio.Event()).set()

    async def _answer(self, request: dict[str, Any]) -> None:
        method, params = request["method"], request.get("params")
        reply: dict[str, Any]
        if method == "window/workDoneProgress/create":
            reply = {"result": None}
        elif method == "workspace/applyEdit":
            reply = {"result": self._apply(params)}
        elif method == "cadenza/askUser":
            reply = {"result": {"answer": None}}  # declined, as `cadenza run --yes` does
        elif method == "window/showMessageRequest":
            reply = {"result": None}
        else:
            reply = {"error": {"code": -32601, "message": f"not supported: {method}"}}
        await self._send({"id": request["id"], **reply})

    def _apply(self, params: Any) -> dict[str, Any]:
        """Write an edit to disk, all or nothing; a malformed one is refused."""
        try:
            edit = default_converter().structure(params["edit"], types.WorkspaceEdit)
        except Exception as exc:
            return {"applied": False, "failureReason": f"malformed WorkspaceEdit: {exc}"}
        outcome = WorkspaceEditApplier(self.root).apply(edit)
        if isinstance(outcome, EditApplied):
            return {"applied": True}
        return {"applied": False, "failureReason": outcome.reason}

    # --- sessions ---------------------------------------------------------------------------

    async def start_session(self, arguments: dict[str, Any]) -> str:
        """``cadenza.startSession``; returns the session id."""
        result = await self.request(
            "workspace/executeCommand",
            {"command": "cadenza.startSession", "arguments": [arguments]},
        )
        assert isinstance(result, dict) and isinstance(result.get("sessionId"), str), result
        session_id: str = result["sessionId"]
        self._ended.setdefault(session_id, asyncio.Event())
        return session_id

    async def wait_end(self, session_id: str, timeout: float) -> None:
        """Wait for the session's ``session_end`` update."""
        await asyncio.wait_for(self._ended[session_id].wait(), timeout)

    def from_server(self) -> list[dict[str, Any]]:
        """Every message the server sent, in order."""
        return [m for direction, m in self.log if direction == "s2c"]

    def response_to(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """This client's response to a request the server sent."""
        for direction, m in self.log:
            if direction == "c2s" and "method" not in m and m.get("id") == request.get("id"):
                return m
        return None

    async def close(self, timeout: float = 30.0) -> int | None:
        """``shutdown`` and ``exit``; kill the process group if the server lingers."""
        with contextlib.suppress(RpcError, ConnectionError, TimeoutError, OSError):
            await self.request("shutdown", None, timeout)
            await self.notify("exit", None)
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5.0)
        return self.proc.returncode
