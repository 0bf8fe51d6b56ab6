"""A scripted OpenAI Chat Completions server on 127.0.0.1, for deterministic model behaviour.

It is a real HTTP server (stdlib ``http.server`` in a thread): ``POST /v1/chat/completions``
with a non-streaming JSON body gets the next scripted reply. Every request body is recorded,
so tests can assert the conversation the agent sent (each ``tool_call`` followed by its
``tool`` message). A reply may instead be an HTTP error status (with ``Retry-After: 0`` so the
provider's retries are immediate) or be held back for a while (to cancel a waiting session).
It also lists its ``models`` as Ollama (``GET /api/tags``) and OpenAI-compatible servers such as
LM Studio (``GET /v1/models``) do.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One scripted answer.

    Attributes:
        content: Assistant text (None: ``content: null``).
        tool_calls: Chat Completions tool calls (see ``tool_call``).
        finish_reason: Defaults to ``tool_calls`` when there are calls, else ``stop``.
        status: HTTP status; anything but 200 sends an error body instead of a completion.
        delay_s: Seconds to hold the answer back (ends early when the server stops).
        cost: ``usage.cost`` as OpenRouter reports it (None: not reported).
        prompt_tokens: ``usage.prompt_tokens`` as reported (the context the request held).
        error_message: The error body's message when ``status`` is not 200 (a server may echo
            the request there, the API key included).
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    status: int = 200
    delay_s: float = 0.0
    cost: float | None = None
    prompt_tokens: int = 10
    error_message: str | None = None

    def body(self, model: str) -> dict[str, Any]:
        """The JSON response body."""
        if self.status != 200:
            said = self.error_message or f"scripted HTTP {self.status}"
            return {"error": {"message": said, "type": "server_error"}}
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        finish = self.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": 5,
            "total_tokens": self.prompt_tokens + 5,
        }
        if self.cost is not None:
            usage["cost"] = self.cost
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }


def tool_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A Chat Completions tool call with JSON-encoded ``arguments``."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def call(name: str, arguments: dict[str, Any], call_id: str) -> Reply:
    """A reply holding exactly one tool call."""
    return Reply(tool_calls=[tool_call(name, arguments, call_id)])


def text(content: str) -> Reply:
    """A final reply without tool calls (ends the turn)."""
    return Reply(content=content)


EXHAUSTED = Reply(content="(the fake model's script is exhausted)")


class FakeOpenAI:
    """The server; use as a context manager or call ``start``/``stop``."""

    def __init__(self, script: list[Reply] | None = None, models: list[str] | None = None) -> None:
        self.models = list(models or [])
        self._lock = threading.Lock()
        self._script: list[Reply] = list(script or [])
        self._stopping = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The TCP port on 127.0.0.1."""
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The value for ``OPENAI_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        """Append replies to the script, answered in order."""
        with self._lock:
            self._script.extend(replies)

    def _next(self) -> Reply:
        with self._lock:
            return self._script.pop(0) if self._script else EXHAUSTED

    def _record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def start(self) -> FakeOpenAI:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release held replies and stop serving."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def listing(self, path: str) -> tuple[int, dict[str, Any]]:
        """The answer to ``GET path``: the models as Ollama or an OpenAI-compatible server."""
        route = path.split("?", 1)[0].rstrip("/")
        if route == "/api/tags":
            return 200, {"models": [{"name": m, "model": m} for m in self.models]}
        if route == "/v1/models":
            listed = [{"id": m, "object": "model", "owned_by": "me"} for m in self.models]
            return 200, {"object": "list", "data": listed}
        return 404, {"error": {"message": f"no route {path}"}}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._send(*fake.listing(self.path))

            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake._record(body)
                reply = fake._next()
                if reply.delay_s:
                    fake._stopping.wait(reply.delay_s)
                self._send(reply.status, reply.body(str(body.get("model", ""))))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if status != 200:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a cancelled session)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def tool_messages(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The ``tool`` messages of a recorded request."""
    return (m for m in request.get("messages", []) if m.get("role") == "tool")


def assert_tool_calls_answered(request: dict[str, Any]) -> None:
    """Every assistant tool call is followed by exactly one ``tool`` message with its id."""
    messages = request.get("messages", [])
    for index, message in enumerate(messages):
        for called in message.get("tool_calls") or []:
            answers = [
                m
                for m in messages[index + 1 :]
                if m.get("role") == "tool" and m.get("tool_call_id") == called["id"]
            ]
            assert len(answers) == 1, f"tool call {called['id']} has {len(answers)} answers"


def is_workspace(message: dict[str, Any]) -> bool:
    """Whether a recorded message is the session's workspace message (where it is, its files)."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith("The workspace is at ")
    )


def person_messages(request: dict[str, Any]) -> list[str]:
    """The ``user`` contents of a recorded request, the workspace message left out."""
    return [
        m["content"]
        for m in request.get("messages", [])
        if m.get("role") == "user" and not is_workspace(m)
    ]
