"""A scripted OpenAI-compatible model server for batch tests, run as its own process.

Many sessions call it at once from Ray workers, so it cannot replay one script in order: each
reply is decided by the session's task text and the step (the number of assistant messages
in the request). Task markers:

- ``batch-write: PATH TOKEN``: step 0 writes ``PATH`` with ``TOKEN`` and a newline
  (``write_file``), then a final answer.
- ``batch-hold: KEY SECONDS``: the first request of the first session carrying ``KEY`` is
  held ``SECONDS`` before it is answered (a task to kill or cancel mid-flight); later sessions
  with the same key are answered at once. Combine with ``batch-write``.

- ``batch-429: KEY SECONDS``: the first request carrying ``KEY`` is answered HTTP 429 with
  ``Retry-After: SECONDS`` (once per key: later ones are answered normally).

``GET /stats`` returns ``{"requests": n, "held": {KEY: times}, "log": [{"t", "task",
"step", "status"}]}``: ``log`` has every request in arrival order, ``t`` the server's monotonic
clock at arrival, ``task`` the ``batch-write`` path of the session's task.
Run: ``python tests/batch/model_server.py`` prints ``PORT <n>`` and serves until killed.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WRITE = re.compile(r"batch-write: (\S+) (\S+)")
HOLD = re.compile(r"batch-hold: (\S+) (\d+(?:\.\d+)?)")
THROTTLE = re.compile(r"batch-429: (\S+) (\d+(?:\.\d+)?)")
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}

LOCK = threading.Lock()
HELD: dict[str, int] = {}
THROTTLED: set[str] = set()
LOG: list[dict[str, Any]] = []
REQUESTS = [0]


def _texts(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


def reply_for(body: dict[str, Any]) -> dict[str, Any]:
    text = _texts(body)
    step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    hold = HOLD.search(text)
    if hold and step == 0:
        with LOCK:
            first = HELD.get(hold[1], 0) == 0
            HELD[hold[1]] = HELD.get(hold[1], 0) + 1
        if first:
            time.sleep(float(hold[2]))
    write = WRITE.search(text)
    message: dict[str, Any] = {"role": "assistant", "content": "done"}
    if write and step == 0:
        arguments = {"path": write[1], "content": write[2] + "\n"}
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": json.dumps(arguments)},
                }
            ],
        }
    finish = "tool_calls" if "tool_calls" in message else "stop"
    return {
        "id": "chatcmpl-batch",
        "object": "chat.completion",
        "model": str(body.get("model", "")),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": USAGE,
    }


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        with LOCK:
            self._send({"requests": REQUESTS[0], "held": dict(HELD), "log": list(LOG)})

    def do_POST(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        text = _texts(body)
        write = WRITE.search(text)
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        throttle = THROTTLE.search(text)
        with LOCK:
            REQUESTS[0] += 1
            status = 429 if throttle and throttle[1] not in THROTTLED else 200
            if throttle and status == 429:
                THROTTLED.add(throttle[1])
            task = write[1] if write else ""
            LOG.append({"t": arrived, "task": task, "step": step, "status": status})
        if status == 429:
            assert throttle is not None
            error = {"error": {"message": "rate limited", "type": "rate_limit_error"}}
            self._send(error, status=429, retry_after=throttle[2])
            return
        self._send(reply_for(body))

    def _send(
        self, payload: dict[str, Any], *, status: int = 200, retry_after: str | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            if retry_after is not None:
                self.send_header("Retry-After", retry_after)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
