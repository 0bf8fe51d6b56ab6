"""Retries with exponential backoff and jitter, honouring ``Retry-After`` (RFC 9110 §10.2.3).

What is retried: HTTP 408/409/429/5xx, transport errors (connect, read, a connection closed),
and a stream that ended before its first event. A streamed reply is retried only before its
first byte reached the caller: after that, a cut is a ``ProviderError`` (the text already shown
must not be shown twice). Providers enforce that by turning a late failure into
``ProviderError``, which is never retried.
"""

from __future__ import annotations

import contextlib
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio
import httpx

from cadenza.providers.base import ProviderError
from cadenza.providers.error_text import status_sentence, transport_sentence
from cadenza.secrets import redact_then_cut

log = logging.getLogger(__name__)

T = TypeVar("T")
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt; 529 is Anthropic's ``overloaded_error``."""


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to wait.

    Attributes:
        attempts: Calls in all, the first included (1: no retry).
        base_delay_s: Backoff before the second attempt (seconds), doubled each time.
        max_delay_s: Upper bound of one wait (seconds), ``Retry-After`` included.
    """

    attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1).

        Args:
            attempt: The attempt that just failed, from 1.
            retry_after: The server's ``Retry-After`` value (seconds or an HTTP date), if any.
        """
        wait = parse_retry_after(retry_after)
        if wait is not None:
            return min(wait, self.max_delay_s)
        backoff = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        return backoff * (0.5 + random.random() / 2)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: delay-seconds or an HTTP-date; None if invalid."""
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


class Retryable(Exception):
    """A failure worth another attempt.

    Attributes:
        retry_after: The server's ``Retry-After`` value, if it sent one.
    """

    def __init__(self, message: str, *, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RetryableStatus(Retryable):
    """An HTTP status worth another attempt (its body already read)."""

    def __init__(self, response: httpx.Response) -> None:
        headers = response.headers
        # OpenAI also sends retry-after-ms; prefer it when present (it is more precise).
        retry_after = headers.get("retry-after")
        ms = headers.get("retry-after-ms")
        if ms is not None:
            with contextlib.suppress(ValueError):
                retry_after = str(float(ms) / 1000.0)
        super().__init__(
            f"HTTP {response.status_code}: {redact_then_cut(response.text, 300, '')}",
            retry_after=retry_after,
        )
        self.response = response


def _describe(exc: Exception) -> str:
    if isinstance(exc, Retryable):
        return str(exc)
    if isinstance(exc, httpx.ReadTimeout):
        return "the model server sent nothing within the read timeout (provider option timeout_s)"
    where = ""
    if isinstance(exc, httpx.RequestError):
        try:
            where = f" ({exc.request.method} {exc.request.url})"
        except RuntimeError:  # no request attached
            where = ""
    return f"{type(exc).__name__}: {exc or 'no details'}{where}"


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    what: str,
    *,
    redact: Callable[[str], str] = str,
) -> T:
    """Run ``call``; retry on ``Retryable`` and ``httpx.TransportError``.

    Args:
        call: One attempt; raises ``ProviderError`` for failures that must not be retried.
        policy: Attempts and waits.
        what: Names the call in the final error (e.g. ``openai/gpt-4.1 chat completion``).
        redact: Applied to the final error's text (removes secrets a server echoed).

    Raises:
        ProviderError: After the last attempt, naming ``what`` and the last failure.
    """
    last: Exception | None = None
    for attempt in range(1, policy.attempts + 1):
        try:
            return await call()
        except (Retryable, httpx.TransportError) as exc:
            last = exc
            # A server that stays silent for the whole read timeout is not a passing fault:
            # waiting that long again would only multiply the wait.
            if attempt == policy.attempts or isinstance(exc, httpx.ReadTimeout):
                break
            retry_after = exc.retry_after if isinstance(exc, Retryable) else None
            wait = policy.delay(attempt, retry_after)
            log.warning(
                "%s: attempt %d failed (%s); retrying in %.2f s",
                what,
                attempt,
                redact(_describe(exc))[:200],  # redacted before it is cut
                wait,
            )
            await anyio.sleep(wait)
    assert last is not None
    raise ProviderError(redact(_final(what, last, attempt)))


def _final(what: str, last: Exception, tries: int) -> str:
    """The error after the last attempt: a readable sentence with the fix where one is known."""
    if isinstance(last, RetryableStatus):
        response = last.response
        return status_sentence(what, response.status_code, response.text, attempts=tries)
    if (sentence := transport_sentence(what, last, attempts=tries)) is not None:
        return sentence
    noun = "attempt" if tries == 1 else "attempts"
    return f"{what} failed after {tries} {noun}: {_describe(last)}"
