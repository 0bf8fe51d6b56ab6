"""Retries for calls to flaky services: exponential backoff with a cap, optional jitter.

The n-th retry (counting from 0) waits ``base * factor ** n`` seconds, never more than
``cap``: with the defaults 0.5 s, 1 s, 2 s, 4 s ... up to 30 s.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def delay(attempt: int, base: float = 0.5, factor: float = 2.0, cap: float = 30.0) -> float:
    """Seconds to wait before retry number ``attempt`` (0 for the first retry).

    Raises:
        ValueError: ``attempt`` is negative.
    """
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, got {attempt}")
    return min(cap, base * factor**attempt)


def schedule(
    retries: int, base: float = 0.5, factor: float = 2.0, cap: float = 30.0
) -> list[float]:
    """The waits before each of ``retries`` retries, in order."""
    return [delay(attempt, base, factor, cap) for attempt in range(retries)]


def with_jitter(delays: Sequence[float], rng: random.Random, spread: float = 0.1) -> list[float]:
    """``delays`` each moved by up to ``spread`` of itself either way, so that clients that
    failed together do not all retry in the same instant."""
    return [d * (1 + rng.uniform(-spread, spread)) for d in delays]


def retry(
    call: Callable[[], T],
    retries: int = 3,
    *,
    retry_on: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError),
    sleep: Callable[[float], None] = time.sleep,
    base: float = 0.5,
) -> T:
    """The result of ``call``, calling it again after a wait when it raises ``retry_on``.

    Raises:
        The last error of ``call`` once ``retries`` retries have failed too.
    """
    waits = schedule(retries, base=base)
    for wait in waits:
        try:
            return call()
        except retry_on:
            sleep(wait)
    return call()
