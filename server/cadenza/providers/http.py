"""One HTTP transport for the wire adapters: retries, server-sent events, errors without secrets.

``post`` sends one JSON request and hands the reply to the adapter, either whole (a JSON body)
or as a stream of server-sent events decoded by ``httpx-sse``. A server that ignores
``stream: true`` and answers with a JSON body is handled too, so one adapter serves both.

Retry rule for streams: a failure before the first event is retried like any transport error;
after it, the reply is already on its way to the person (text deltas went to ``on_text``), so a
cut becomes ``ProviderError`` at once. Cancelling the calling task leaves the ``stream`` context,
which closes the connection: the server sees the client go away immediately.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio
import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from cadenza.providers.base import ProviderError
from cadenza.providers.error_text import status_sentence
from cadenza.providers.retry import RETRY_STATUS, Retryable, RetryableStatus, RetryPolicy
from cadenza.providers.retry import with_retries as _with_retries
from cadenza.secrets import redact, redact_then_cut

T = TypeVar("T")

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
CONNECT_TIMEOUT_S = 10.0
DRAIN_TIMEOUT_S = 1.0
"""How long a finished stream may take to end before its connection is dropped (seconds)."""
ERROR_BODY_CHARS = 500
"""How much of an error body goes into the error message (characters)."""
POOL_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=None)
"""No cap on connections: a provider is shared by every session of a server, and each session
has one request in flight, so the sessions bound it. httpx's default (100 connections, 20 kept
alive) made the 101st concurrent session wait for a free connection inside its step, and opened
a new connection (a TLS handshake on a hosted API) for most requests once more than 20 sessions
ran; idle connections still close after httpx's keep-alive expiry (5 s)."""

EventConsumer = Callable[[AsyncIterator[ServerSentEvent]], Awaitable[T]]
"""Reads one reply's events and returns the reply; raises ``StreamEnded`` when they stop short."""
WholeConsumer = Callable[[dict[str, Any]], T]
"""Maps one whole JSON reply body."""


class StreamEnded(Exception):
    """The event stream ended before the reply was complete (no final event)."""


@dataclass
class _Seen:
    events: int = 0


async def _counted(
    source: AsyncIterator[ServerSentEvent], seen: _Seen
) -> AsyncIterator[ServerSentEvent]:
    async for event in source:
        seen.events += 1
        yield event


async def _drain(source: AsyncIterator[ServerSentEvent]) -> None:
    """Read what is left of a stream after its final event (normally nothing but its end).

    The consumers stop at ``[DONE]`` or ``message_stop``; a response closed before its end is
    read closes its connection too, so every request opened a new one (a TCP handshake, and a
    TLS one for remote servers). Reading to the end returns the connection to the pool. A
    server that keeps the stream open after its final event gets ``DRAIN_TIMEOUT_S``.
    """
    with anyio.move_on_after(DRAIN_TIMEOUT_S), contextlib.suppress(httpx.HTTPError, SSEError):
        async for _ in source:
            pass


def json_event(event: ServerSentEvent, who: str) -> dict[str, Any]:
    """The JSON object carried by one event's ``data``.

    Raises:
        ProviderError: The data is not a JSON object (a malformed chunk is never guessed at).
    """
    try:
        data = json.loads(event.data)
    except ValueError:
        raise ProviderError(
            f"{who}: malformed stream event: {redact_then_cut(event.data, 200, '')!r}"
        ) from None
    if not isinstance(data, dict):
        raise ProviderError(
            f"{who}: stream event is not a JSON object: {redact_then_cut(event.data, 200, '')!r}"
        )
    return data


class StreamState(Protocol):
    """An adapter's accumulator of one streamed reply, fed by ``read_stream``."""

    def add(self, data: dict[str, Any]) -> None:
        """Take one event's JSON object (raising ``ProviderError`` for an error event)."""
        ...

    def end(self) -> None:
        """The stream's end marker (``[DONE]``, not JSON) arrived."""
        ...

    @property
    def ended(self) -> bool:
        """The final event was seen: nothing after it is read."""
        ...

    @property
    def complete(self) -> bool:
        """What was seen makes a whole reply."""
        ...


async def read_stream(
    events: AsyncIterator[ServerSentEvent],
    state: StreamState,
    *,
    who: str,
    end_marker: str | None = None,
) -> None:
    """Feed each event's JSON object to ``state`` until its final event or the stream's end.

    Events without data (keep-alives) are skipped; every other event must carry one JSON
    object (a malformed chunk is never guessed at).

    Args:
        events: The reply's server-sent events.
        state: Accumulates the reply.
        who: Names the provider in errors.
        end_marker: Data that ends the stream without being JSON (``[DONE]``), if any.

    Raises:
        ProviderError: A malformed event, or one the state rejects.
        StreamEnded: The events stopped before ``state`` was complete.
    """
    async for event in events:
        data = event.data.strip()
        if end_marker is not None and data == end_marker:
            state.end()
            break
        if not data:
            continue
        state.add(json_event(event, who))
        if state.ended:
            break
    if not state.complete:
        raise StreamEnded


class HttpTransport:
    """An ``httpx.AsyncClient`` for one provider, plus its retry policy.

    Args:
        who: Names the provider in errors (``PROVIDER/MODEL``).
        base_url: Requests go to paths below it (a trailing slash is added).
        headers: Sent with every request (API keys included; never logged).
        timeout_s: Read timeout (seconds): the longest silence between two chunks.
        retry: Attempts and backoff.
    """

    def __init__(
        self,
        *,
        who: str,
        base_url: str,
        headers: Mapping[str, str],
        timeout_s: float,
        retry: RetryPolicy,
    ) -> None:
        self.who = who
        self.retry = retry
        url = httpx.URL(base_url.rstrip("/") + "/")
        self._client = httpx.AsyncClient(
            base_url=url,
            headers=dict(headers),
            timeout=httpx.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S),
            limits=POOL_LIMITS,
            # A proxy from the environment must not capture a model server on loopback.
            trust_env=url.host not in LOOPBACK_HOSTS,
        )

    async def post(
        self,
        path: str,
        body: dict[str, Any] | bytes,
        *,
        whole: WholeConsumer[T],
        events: EventConsumer[T] | None = None,
    ) -> T:
        """POST ``body`` with retries; the reply goes to ``events`` when streamed, else ``whole``.

        Args:
            path: Relative to the base URL (e.g. ``chat/completions``).
            body: The JSON request body (a value, or already encoded as UTF-8 JSON).
            whole: Maps a JSON reply body.
            events: Reads a ``text/event-stream`` reply; None for a non-streaming request.

        Raises:
            ProviderError: A client error (4xx other than 408/409/429), a malformed reply, a
                stream cut after its first event, or the last attempt failed.
        """
        return await _with_retries(
            lambda: self._attempt(path, body, whole, events),
            self.retry,
            self.who,
            redact=redact,
        )

    async def _attempt(
        self,
        path: str,
        body: dict[str, Any] | bytes,
        whole: WholeConsumer[T],
        events: EventConsumer[T] | None,
    ) -> T:
        headers = {"Accept": "text/event-stream"} if events is not None else {}
        if isinstance(body, bytes):
            headers["Content-Type"] = "application/json"
            stream = self._client.stream("POST", path, content=body, headers=headers)
        else:
            stream = self._client.stream("POST", path, json=body, headers=headers)
        async with stream as response:
            await self._check_status(response)
            content_type = response.headers.get("content-type", "")
            if events is not None and "text/event-stream" in content_type:
                return await self._read_events(response, events)
            await response.aread()
            return whole(self._json(response))

    async def _check_status(self, response: httpx.Response) -> None:
        if response.status_code < 400:
            return
        await response.aread()
        if response.status_code in RETRY_STATUS:
            raise RetryableStatus(response)
        body = redact_then_cut(response.text, ERROR_BODY_CHARS, "")
        raise ProviderError(redact(status_sentence(self.who, response.status_code, body)))

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            raise ProviderError(
                f"{self.who}: reply is not JSON: {redact_then_cut(response.text, 200, '')!r}"
            ) from None
        if not isinstance(data, dict):
            raise ProviderError(f"{self.who}: reply is not a JSON object")
        return data

    async def _read_events(self, response: httpx.Response, consume: EventConsumer[T]) -> T:
        seen = _Seen()
        try:
            source = _counted(EventSource(response).aiter_sse(), seen)
            result = await consume(source)
            await _drain(source)
            return result
        except StreamEnded:
            if seen.events == 0:
                raise Retryable("the stream ended before its first event") from None
            raise ProviderError(
                f"{self.who}: the stream ended after {seen.events} events, before the reply "
                "was complete"
            ) from None
        except httpx.TransportError as exc:
            if seen.events == 0:
                raise
            raise ProviderError(
                redact(
                    f"{self.who}: the stream was cut after {seen.events} events "
                    f"({type(exc).__name__}: {exc})"
                )
            ) from None
        except SSEError as exc:
            raise ProviderError(redact(f"{self.who}: malformed event stream: {exc}")) from None

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()
