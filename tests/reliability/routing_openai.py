"""A fake OpenAI server that answers each session by the token in its task, for isolation tests.

Every request must carry exactly one ``TOKEN-<n>`` (the task's); a request that holds another
session's token is recorded as a leak. The reply depends on the assistant turns so far: read
``secret.txt``, then write ``out.txt`` with the token and what was read, then a final text.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = re.compile(r"TOKEN-(\d+)")


def _reply(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-routing",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return _reply(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ],
        },
        "tool_calls",
    )


class RoutingOpenAI:
    def __init__(self, delay_s: float = 0.05) -> None:
        self.delay_s = delay_s
        self.lock = threading.Lock()
        self.leaks: list[str] = []
        self.requests: dict[str, int] = defaultdict(int)
        self.in_flight = 0
        self.max_in_flight = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> RoutingOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        raw = json.dumps(body)
        tokens = set(TOKEN.findall(raw))
        messages = body.get("messages", [])
        task = next(
            (m["content"] for m in messages if m.get("role") == "user" and "TOKEN-" in str(m)),
            "",
        )
        own = TOKEN.findall(str(task))
        token = own[0] if own else "?"
        with self.lock:
            self.requests[token] += 1
            if tokens != {token}:
                self.leaks.append(f"request of TOKEN-{token} holds tokens {sorted(tokens)}")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        time.sleep(self.delay_s)
        with self.lock:
            self.in_flight -= 1
        turns = sum(1 for m in messages if m.get("role") == "assistant")
        if turns == 0:
            return _call("read_file", {"path": "secret.txt"}, f"call_{token}_1")
        if turns == 1:
            seen = [m.get("content", "") for m in messages if m.get("role") == "tool"]
            content = f"written for TOKEN-{token}; read: {' | '.join(map(str, seen))}\n"
            return _call("write_file", {"path": "out.txt", "content": content}, f"call_{token}_2")
        return _reply({"role": "assistant", "content": f"done with TOKEN-{token}"}, "stop")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                data = json.dumps(fake.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
