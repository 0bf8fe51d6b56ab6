"""Retries with exponential backoff and jitter, honouring ``Retry-After`` (RFC 9110 §10.2.3)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio
import httpx

from cadenza.providers.base import ProviderError

T = TypeVar("T")
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to wait (seconds)."""

    attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.max_delay_s)
            except ValueError:
                pass
        backoff = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        return backoff * (0.5 + random.random() / 2)


class RetryableStatus(Exception):
    """An HTTP status worth another attempt."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


def _describe(exc: Exception) -> str:
    if isinstance(exc, RetryableStatus):
        return f"HTTP {exc.response.status_code}: {exc.response.text[:300]}"
    return f"{type(exc).__name__}: {exc}"


async def with_retries(call: Callable[[], Awaitable[T]], policy: RetryPolicy, what: str) -> T:
    """Run ``call``; retry on ``RetryableStatus`` and transport errors.

    Raises:
        ProviderError: After the last attempt, naming ``what`` and the last failure.
    """
    last: Exception | None = None
    for attempt in range(1, policy.attempts + 1):
        try:
            return await call()
        except (RetryableStatus, httpx.TransportError) as exc:
            last = exc
            if attempt == policy.attempts:
                break
            retry_after = (
                exc.response.headers.get("retry-after")
                if isinstance(exc, RetryableStatus)
                else None
            )
            await anyio.sleep(policy.delay(attempt, retry_after))
    assert last is not None
    raise ProviderError(f"{what} failed after {policy.attempts} attempts: {_describe(last)}")
