"""The scripted OpenAI-compatible model for the VS Code end-to-end tests, as a process.

Runs ``tests.support.fake_openai.FakeOpenAI`` plus a small control server, both on 127.0.0.1,
and prints one JSON line ``{"baseUrl": ..., "control": ...}`` on stdout once both listen. The
test driver (Node) scripts the model between scenarios:

- ``POST /script`` with ``{"replies": [REPLY, ...]}`` appends replies, where REPLY is
  ``{"content"?, "tool_calls"?: [{"name", "arguments", "id"}], "delay_s"?, "status"?,
  "prompt_tokens"?}`` (``prompt_tokens``: the usage it reports, 10 unless given);
- ``GET /requests`` returns every chat request received so far (JSON list);
- ``POST /reset`` forgets the script and the requests.

It stops on SIGTERM/SIGINT or when its stdin closes (so a killed driver never leaves it behind).
Usage: ``python tests/vscode/fake_model.py [MODEL...]`` from anywhere; the MODELs are what it
lists as an Ollama (``GET /api/tags``) or an OpenAI-compatible server (``GET /v1/models``) would.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.fake_openai import FakeOpenAI, Reply, tool_call


def reply_of(spec: dict[str, Any]) -> Reply:
    """A ``Reply`` from its JSON description."""
    calls = [
        tool_call(str(c["name"]), dict(c.get("arguments") or {}), str(c["id"]))
        for c in spec.get("tool_calls") or []
    ]
    return Reply(
        content=spec.get("content"),
        tool_calls=calls,
        status=int(spec.get("status", 200)),
        delay_s=float(spec.get("delay_s", 0.0)),
        prompt_tokens=int(spec.get("prompt_tokens", 10)),
    )


def control_server(fake: FakeOpenAI) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/requests":
                self._send(200, fake.requests)
            else:
                self._send(404, {"error": self.path})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/script":
                fake.script(*(reply_of(r) for r in body.get("replies", [])))
                self._send(200, {"ok": True})
            elif self.path == "/reset":
                with fake._lock:  # the fake has no public reset; its lock guards both lists
                    fake._script.clear()
                    fake.requests.clear()
                self._send(200, {"ok": True})
            else:
                self._send(404, {"error": self.path})

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return server


def main() -> int:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with FakeOpenAI(models=sys.argv[1:]) as fake:
        control = control_server(fake)
        threading.Thread(target=control.serve_forever, daemon=True).start()
        port = control.server_address[1]
        print(
            json.dumps({"baseUrl": fake.base_url, "control": f"http://127.0.0.1:{port}"}),
            flush=True,
        )

        def watch_stdin() -> None:
            sys.stdin.read()
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
        stop.wait()
        control.shutdown()
        control.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
