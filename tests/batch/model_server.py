"""A scripted OpenAI-compatible model server for batch tests, run as its own process.

Many sessions call it at once from Ray workers, so it cannot replay one script in order: each
reply is decided by the session's task text and the step (the number of assistant messages
in the request). Task markers:

- ``batch-write: PATH TOKEN``: step 0 writes ``PATH`` with ``TOKEN`` and a newline
  (``write_file``), then a final answer.
- ``batch-hold: KEY SECONDS``: the first request of the first session carrying ``KEY`` is
  held ``SECONDS`` before it is answered (a task to kill or cancel mid-flight); later sessions
  with the same key are answered at once. Combine with ``batch-write``.

``GET /stats`` returns ``{"requests": n, "held": {KEY: times}}``.
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
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}

LOCK = threading.Lock()
HELD: dict[str, int] = {}
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
            self._send({"requests": REQUESTS[0], "held": dict(HELD)})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with LOCK:
            REQUESTS[0] += 1
        self._send(reply_for(body))

    def _send(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(200)
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
