"""A scripted model server on 127.0.0.1 that speaks OpenAI and Anthropic server-sent events.

A real HTTP server (stdlib ``http.server`` in a thread, HTTP/1.1 with chunked bodies written by
hand), so the providers run their real httpx + httpx-sse code: every POST gets the next scripted
action, whatever its path (``/v1/chat/completions`` or ``/v1/messages``), and is recorded with
its path, headers and JSON body. Actions:

- ``Sse(events)``: a ``text/event-stream`` reply, one event per item; ``cut_after=N`` closes the
  socket after N events without ending the chunked body (the client sees a broken stream);
  ``close_after=N`` ends the body cleanly after N events (a stream that just stops);
  ``hold=True`` keeps the stream open after its events, sending keep-alive comments until the
  client goes away (recorded in ``disconnects``); ``first_after_s`` holds the headers and
  first event back that long (a prompt being evaluated), ``gap_s`` waits between events.
- ``Status(code, body, headers)``: an error reply.
- ``Json(body)``: a whole JSON reply (a server that ignores ``stream: true``).

``strict=True`` answers 400, like strict OpenAI-compatible servers, when a Chat Completions
request's history has a tool call without its tool message (``check_strict_wire``).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cadenza.engine.history import StrictHistoryError, check_strict_wire

KEEPALIVE_S = 0.05


@dataclass(frozen=True, kw_only=True)
class Sse:
    events: list[str | tuple[str, str]]
    cut_after: int | None = None
    close_after: int | None = None
    hold: bool = False
    first_after_s: float = 0.0
    gap_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Status:
    code: int
    body: str = '{"error": {"message": "scripted error", "type": "server_error"}}'
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Json:
    body: dict[str, Any]


Action = Sse | Status | Json


@dataclass(frozen=True, kw_only=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


# --- OpenAI chunks --------------------------------------------------------------------


def oa_chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def oa_usage(prompt: int = 11, completion: int = 7) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
    )


def oa_text(*pieces: str, finish: str = "stop") -> list[str | tuple[str, str]]:
    """A streamed text reply: role, one chunk per piece, finish, usage, [DONE]."""
    events: list[str | tuple[str, str]] = [oa_chunk({"role": "assistant", "content": ""})]
    events += [oa_chunk({"content": p}) for p in pieces]
    return [*events, oa_chunk({}, finish), oa_usage(), "[DONE]"]


def oa_tool_delta(
    index: int, *, id: str | None = None, name: str | None = None, args: str = ""
) -> str:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return oa_chunk({"tool_calls": [call]})


def oa_call(call_id: str, name: str, arguments: dict[str, Any]) -> list[str | tuple[str, str]]:
    """A streamed reply with one tool call whose arguments arrive in two pieces."""
    text = json.dumps(arguments)
    half = len(text) // 2
    return [
        oa_chunk({"role": "assistant", "content": None}),
        oa_tool_delta(0, id=call_id, name=name),
        oa_tool_delta(0, args=text[:half]),
        oa_tool_delta(0, args=text[half:]),
        oa_chunk({}, "tool_calls"),
        oa_usage(),
        "[DONE]",
    ]


# --- Anthropic events -------------------------------------------------------------------


def an_event(kind: str, **data: Any) -> tuple[str, str]:
    return kind, json.dumps({"type": kind, **data})


def an_start(input_tokens: int = 20, cache_read: int = 0) -> tuple[str, str]:
    return an_event(
        "message_start",
        message={
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-test",
            "stop_reason": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": 0,
                "output_tokens": 1,
            },
        },
    )


def an_text_block(index: int, *pieces: str) -> list[str | tuple[str, str]]:
    return [
        an_event("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *[
            an_event("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
            for p in pieces
        ],
        an_event("content_block_stop", index=index),
    ]


def an_tool_block(
    index: int, call_id: str, name: str, *json_pieces: str
) -> list[str | tuple[str, str]]:
    return [
        an_event(
            "content_block_start",
            index=index,
            content_block={"type": "tool_use", "id": call_id, "name": name, "input": {}},
        ),
        *[
            an_event(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": p},
            )
            for p in json_pieces
        ],
        an_event("content_block_stop", index=index),
    ]


def an_end(stop_reason: str, output_tokens: int = 9) -> list[str | tuple[str, str]]:
    return [
        an_event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        an_event("message_stop"),
    ]


def an_text(*pieces: str) -> list[str | tuple[str, str]]:
    return [an_start(), an_event("ping"), *an_text_block(0, *pieces), *an_end("end_turn")]


def an_call(call_id: str, name: str, arguments: dict[str, Any]) -> list[str | tuple[str, str]]:
    text = json.dumps(arguments)
    return [
        an_start(),
        *an_tool_block(0, call_id, name, text[:5], text[5:]),
        *an_end("tool_use"),
    ]


# --- the server -----------------------------------------------------------------------


class FakeModelServer:
    """The scripted server; a context manager."""

    def __init__(self, *actions: Action, strict: bool = False) -> None:
        self._lock = threading.Lock()
        self._script: list[Action] = list(actions)
        self.strict = strict
        self.requests: list[Recorded] = []
        self.disconnects: list[float] = []
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """For OpenAI-compatible providers (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """For ``ANTHROPIC_BASE_URL`` (``/v1/messages`` is appended)."""
        return f"http://127.0.0.1:{self.port}"

    def script(self, *actions: Action) -> None:
        with self._lock:
            self._script.extend(actions)

    def _next(self) -> Action:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        return Status(code=500, body='{"error": {"message": "script exhausted"}}')

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()


class _Server(ThreadingHTTPServer):
    fake: FakeModelServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    @property
    def fake(self) -> FakeModelServer:
        return self.server.fake

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.fake._lock:
            self.fake.requests.append(
                Recorded(path=self.path, headers=dict(self.headers.items()), body=body)
            )
        if self.fake.strict and self.path.endswith("/chat/completions"):
            try:
                check_strict_wire(body.get("messages", []))
            except StrictHistoryError as exc:
                self._whole(400, json.dumps(exc.response_body()), {})
                return
        action = self.fake._next()
        if isinstance(action, Status):
            self._whole(action.code, action.body, action.headers)
        elif isinstance(action, Json):
            self._whole(200, json.dumps(action.body), {})
        else:
            self._stream(action)

    def _whole(self, code: int, text: str, headers: dict[str, str]) -> None:
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, action: Sse) -> None:
        self.fake._stopping.wait(action.first_after_s)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        try:
            for count, item in enumerate(action.events):
                if action.cut_after is not None and count >= action.cut_after:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if action.close_after is not None and count >= action.close_after:
                    break
                kind, data = item if isinstance(item, tuple) else (None, item)
                text = (f"event: {kind}\n" if kind else "") + f"data: {data}\n\n"
                if count and action.gap_s:
                    self.fake._stopping.wait(action.gap_s)
                self._chunk(text.encode())
            if action.hold:
                while not self.fake._stopping.is_set():
                    self._chunk(b": keep-alive\n\n")
                    time.sleep(KEEPALIVE_S)
            self._chunk(b"")  # the terminating zero-length chunk
        except (BrokenPipeError, ConnectionResetError):
            self.fake.disconnects.append(time.monotonic())
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass
