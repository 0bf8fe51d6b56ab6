"""Hosted providers in a batch: one rate limiter per provider, so a 429 slows the whole batch.

Alone, each session backs off after a 429 on its own while the batch's other sessions keep
calling, and the provider keeps refusing. In a batch, a Ray actor per provider
(:class:`RateLimiter`) holds the provider's pace: every request of every session first asks
it for a slot; a 429 pauses everyone (``Retry-After``, else a backoff that doubles) and then
spaces the requests by an interval that halves with each success until it is gone.

The sessions reach the provider through :class:`LimitedProxy`, a small HTTP forwarder the
worker runs on 127.0.0.1 for its session (``CADENZA_BASE_URL`` points the session's provider
at it). The proxy takes a slot before each request, and on a 429 tells the limiter and tries
again itself (up to ``PROXY_ATTEMPTS``), so the session's own retries are not multiplied.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx

from cadenza.providers.retry import parse_retry_after

BASE_DELAY_S = 1.0
"""The first pause after a 429 without ``Retry-After``, and the spacing after one (seconds)."""
MAX_DELAY_S = 60.0
PROXY_ATTEMPTS = 6
"""Tries of one request through the proxy (429s included) before the 429 reaches the session."""
FORWARD_TIMEOUT_S = 600.0
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"}
)
ENV_BASE_URL = "CADENZA_BASE_URL"
"""Overrides the session's HTTP provider's base URL (:mod:`cadenza.providers.registry`)."""


class RateLimiter:
    """The Ray actor's class (Ray-free, testable alone): one provider's pace.

    Times are this process's monotonic clock; callers get relative waits.
    """

    def __init__(self, base_delay_s: float = BASE_DELAY_S, max_delay_s: float = MAX_DELAY_S):
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.paused_until = 0.0
        self.interval = 0.0
        self.next_slot = 0.0

    def acquire(self) -> float:
        """Take the next slot; returns the seconds to wait before sending."""
        now = time.monotonic()
        slot = max(now, self.paused_until, self.next_slot)
        self.next_slot = slot + self.interval
        return slot - now

    def throttled(self, retry_after_s: float | None) -> float:
        """The provider answered 429: pause every session; returns the pause (seconds)."""
        now = time.monotonic()
        self.interval = min(max(self.interval * 2, self.base_delay_s), self.max_delay_s)
        pause = self.interval if retry_after_s is None else min(retry_after_s, self.max_delay_s)
        self.paused_until = max(self.paused_until, now + pause)
        self.next_slot = max(self.next_slot, self.paused_until)
        return pause

    def succeeded(self) -> None:
        """A request went through: relax the spacing (halved; gone below a tenth)."""
        self.interval /= 2
        if self.interval < self.base_delay_s / 10:
            self.interval = 0.0


@dataclass(frozen=True, kw_only=True)
class Limited:
    """A provider under a batch-wide limiter: where it really is and the limiter's handle."""

    upstream: str
    """The provider's base URL, e.g. ``https://api.openai.com/v1``."""
    limiter: Any
    """A Ray actor handle of :class:`RateLimiter`."""


class LimitedProxy:
    """An HTTP forwarder to ``upstream`` on 127.0.0.1 that paces requests through a limiter.

    Args:
        upstream: The provider's base URL.
        acquire: Blocks for the next slot (the limiter's :meth:`RateLimiter.acquire` + sleep).
        throttled: Reports a 429 with its ``Retry-After`` seconds.
        succeeded: Reports a request that went through.
    """

    def __init__(
        self,
        upstream: str,
        *,
        acquire: Callable[[], None],
        throttled: Callable[[float | None], None],
        succeeded: Callable[[], None],
    ) -> None:
        parts = urlsplit(upstream)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path.rstrip("/")
        self.acquire, self.throttled, self.succeeded = acquire, throttled, succeeded
        self.client = httpx.Client(timeout=FORWARD_TIMEOUT_S, trust_env=True)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The session's base URL: this proxy, with the upstream's path."""
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"

    def __enter__(self) -> LimitedProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.client.close()

    def forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
        """Send one request upstream when the limiter allows; retry 429s.

        Returns:
            The response, streaming (the caller closes it).
        """
        url = self.origin + path
        request = self.client.build_request(method, url, headers=headers, content=body)
        for attempt in range(1, PROXY_ATTEMPTS + 1):
            self.acquire()
            response = self.client.send(request, stream=True)
            if response.status_code != 429 or attempt == PROXY_ATTEMPTS:
                if response.status_code < 400:
                    self.succeeded()
                return response
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            response.close()
            self.throttled(retry_after)
        raise AssertionError("unreachable")


def _handler(proxy: LimitedProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _relay(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            try:
                response = proxy.forward(self.command, self.path, headers, body)
            except httpx.HTTPError as exc:
                self._fail(f"the batch's proxy could not reach the provider: {exc}")
                return
            with contextlib.closing(response):
                self.send_response(response.status_code)
                for key, value in response.headers.multi_items():
                    if key.lower() not in HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header("Connection", "close")
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, httpx.HTTPError):
                    for chunk in response.iter_raw():
                        self.wfile.write(chunk)
                        self.wfile.flush()

        def _fail(self, message: str) -> None:
            data = message.encode()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(502)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _relay

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def limited_proxy(limited: Limited) -> LimitedProxy:
    """The worker's proxy to ``limited``'s provider, paced by its Ray actor (use ``with``)."""
    import ray

    handle = limited.limiter

    def acquire() -> None:
        time.sleep(float(ray.get(handle.acquire.remote())))

    def throttled(retry_after_s: float | None) -> None:
        ray.get(handle.throttled.remote(retry_after_s))

    def succeeded() -> None:
        handle.succeeded.remote()  # no need to wait for it

    return LimitedProxy(limited.upstream, acquire=acquire, throttled=throttled, succeeded=succeeded)
