"""A fault-injecting OpenAI-compatible model server: each request gets the next scripted fault.

Faults: an HTTP status with ``Retry-After`` (429 storms, 500s), silence (no byte until the
client gives up), a connection reset in the middle of a server-sent-events stream, a malformed
JSON body or SSE event, a tool call cut by ``finish_reason: "length"`` in the middle of its
arguments; and well-formed SSE replies (text, tool calls). Every request is counted.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Fault:
    """One scripted answer.

    kind: ``status`` (``status``, ``retry_after``), ``silence`` (``seconds``), ``reset``
    (after ``events`` of the reply were streamed; 0: before any byte of the body),
    ``bad_json``, ``bad_sse``, ``sse`` (a well-formed stream of ``events``).
    """

    kind: str
    status: int = 200
    retry_after: str | None = None
    seconds: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)
    cut_after: int = 0


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-faulty",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def text_events(text: str) -> list[dict[str, Any]]:
    """A streamed text reply, a few characters per chunk."""
    parts = [text[i : i + 4] for i in range(0, len(text), 4)] or [""]
    events = [chunk({"role": "assistant", "content": parts[0]})]
    events += [chunk({"content": p}) for p in parts[1:]]
    events.append(chunk({}, "stop"))
    return events


def call_events(
    name: str, arguments: str, call_id: str, finish: str = "tool_calls", pieces: int = 4
) -> list[dict[str, Any]]:
    """A streamed tool call whose ``arguments`` arrive in ``pieces`` deltas."""
    size = max(1, len(arguments) // pieces)
    parts = [arguments[i : i + size] for i in range(0, len(arguments), size)]
    events = [
        chunk(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                ],
            }
        )
    ]
    events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in parts]
    events.append(chunk({}, finish))
    return events


def text(content: str) -> Fault:
    return Fault(kind="sse", events=text_events(content))


def call(name: str, arguments: dict[str, Any], call_id: str) -> Fault:
    return Fault(kind="sse", events=call_events(name, json.dumps(arguments), call_id))


class FaultyOpenAI:
    """The server (a context manager); ``script`` appends faults, answered in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script: list[Fault] = []
        self._stopping = threading.Event()
        self.requests = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, *faults: Fault) -> None:
        with self._lock:
            self._script.extend(faults)

    def clear(self) -> None:
        """Forget the faults not answered yet (a scenario that ended early)."""
        with self._lock:
            self._script.clear()

    def left(self) -> int:
        with self._lock:
            return len(self._script)

    def _next(self) -> Fault:
        with self._lock:
            self.requests += 1
            return self._script.pop(0) if self._script else text("(script exhausted)")

    def __enter__(self) -> FaultyOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:  # noqa: C901
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                fault = server._next()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(fault)

            def _answer(self, fault: Fault) -> None:  # noqa: C901
                match fault.kind:
                    case "status":
                        body = json.dumps(
                            {"error": {"message": f"fault {fault.status}", "type": "x"}}
                        ).encode()
                        self.send_response(fault.status)
                        if fault.retry_after is not None:
                            self.send_header("Retry-After", fault.retry_after)
                        self._body(body, "application/json")
                    case "silence":
                        server._stopping.wait(fault.seconds)
                        self.close_connection = True
                    case "echo_auth":  # a server quoting the request's credentials back
                        echoed = f"invalid key in {self.headers.get('Authorization')}"
                        body = json.dumps({"error": {"message": echoed}}).encode()
                        self.send_response(fault.status)
                        self._body(body, "application/json")
                    case "bad_json":
                        self.send_response(200)
                        self._body(b'{"choices": [{"message": {"content": "x"', "application/json")
                    case "bad_sse":
                        self._sse_head()
                        self._event(chunk({"role": "assistant", "content": "Hel"}))
                        self.wfile.write(b"data: {not json at all\n\n")
                        self.wfile.flush()
                    case "reset":
                        self._sse_head()
                        for event in fault.events[: fault.cut_after]:
                            self._event(event)
                        self._reset()
                    case "sse":
                        self._sse_head()
                        for event in fault.events:
                            self._event(event)
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                        self.close_connection = True
                    case _:
                        raise AssertionError(fault.kind)

            def _body(self, body: bytes, content_type: str) -> None:
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _sse_head(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

            def _event(self, event: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                self.wfile.flush()

            def _reset(self) -> None:
                self.wfile.flush()
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
