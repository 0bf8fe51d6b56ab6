"""A folder served over HTTP on 127.0.0.1 (the standard library's server), standing in for a
download host: a model mirror in the tests of ``CADENZA_MODEL_CATALOG``."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _QuietHandler(SimpleHTTPRequestHandler):
    requests: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        self.requests.append(self.path)


@contextmanager
def serve_folder(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve ``folder``; yields its base URL and the list of paths requested so far."""
    requested: list[str] = []
    handler = type("Handler", (_QuietHandler,), {"requests": requested})
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
    )
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
