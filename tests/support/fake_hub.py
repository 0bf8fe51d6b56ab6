"""A Hugging Face Hub on 127.0.0.1 (``HF_ENDPOINT``): the model API and the file URLs.

``GET /api/models/ORG/REPO`` answers the repository's commit and files with their LFS
metadata (size, SHA-256), as the Hub does for ``?blobs=true``; ``HEAD`` and ``GET`` of
``/ORG/REPO/resolve/REVISION/FILE`` answer the file with the headers ``huggingface_hub`` reads
(``X-Repo-Commit``, ``ETag``, ``Content-Length``) and honour ``Range``. A file may be served
with a SHA-256 that is not its own (``lie_about``), or cut after some bytes on its first GET
(``cut_after``), to test refusal and resumption. Every request is recorded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class HubRepo:
    """One repository: its files by path, and what to get wrong about them."""

    files: dict[str, bytes]
    lie_about: set[str] = field(default_factory=set)
    cut_after: dict[str, int] = field(default_factory=dict)

    def sha256(self, path: str) -> str:
        """The SHA-256 the Hub states for ``path`` (a wrong one when lying about it)."""
        data = self.files[path]
        if path in self.lie_about:
            data = data + b"not this"
        return hashlib.sha256(data).hexdigest()


class FakeHub:
    """The server; a context manager."""

    def __init__(self, repos: dict[str, HubRepo]) -> None:
        self.repos = repos
        self.requests: list[tuple[str, str, str | None]] = []
        """``(method, path, Range header)`` of every request."""
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The value for ``HF_ENDPOINT``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _info(self, repo_id: str) -> dict[str, Any]:
        repo = self.repos[repo_id]
        return {
            "id": repo_id,
            "sha": COMMIT,
            "siblings": [
                {
                    "rfilename": path,
                    "size": len(data),
                    "blobId": hashlib.sha1(data).hexdigest(),
                    "lfs": {"size": len(data), "sha256": repo.sha256(path), "pointerSize": 134},
                }
                for path, data in repo.files.items()
            ],
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"hub": self})

    def _take_cut(self, repo: HubRepo, name: str) -> int | None:
        """Where to cut ``name`` this time (only once)."""
        with self._lock:
            return repo.cut_after.pop(name, None)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: FakeHub

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, *, body: bool) -> None:
        hub = self.hub
        path = self.path.split("?", 1)[0]
        with hub._lock:
            hub.requests.append((self.command, path, self.headers.get("Range")))
        if path.startswith("/api/models/"):
            repo_id = path.removeprefix("/api/models/").split("/revision/")[0]
            if repo_id in hub.repos:
                self._json(200, hub._info(repo_id))
            else:
                self._json(404, {"error": "Repository not found"})
            return
        repo_id, _, rest = path.lstrip("/").partition("/resolve/")
        repo = hub.repos.get(repo_id)
        name = rest.split("/", 1)[-1]
        if repo is None or name not in repo.files:
            self._json(404, {"error": "Entry not found"})
            return
        self._file(repo, name, body=body)

    def _file(self, repo: HubRepo, name: str, *, body: bool) -> None:
        data = repo.files[name]
        start = 0
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
            start = int(wanted.removeprefix("bytes=").split("-")[0])
        self.send_response(206 if start else 200)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", f'"{repo.sha256(name)}"')
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if not body:
            return
        cut = self.hub._take_cut(repo, name)
        if cut is not None:
            self.wfile.write(data[start:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data[start:])

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass
