"""Per-session resources that tools keep between calls, closed when the session ends.

A browser session the person logged into, for example, must outlive the tool call that opened
it (``browse_interactive`` resumes it after ``waiting_human``) but not the agent session. Tools
ask for a resource by its type; the first call creates it, ``aclose`` closes all of them in
reverse creation order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol, TypeVar

log = logging.getLogger(__name__)


class AsyncCloseable(Protocol):
    """Anything with ``async def aclose()``."""

    async def aclose(self) -> None:
        """Release what it holds (idempotent)."""
        ...


R = TypeVar("R", bound=AsyncCloseable)


class SessionResources:
    """Resources of one agent session, at most one per type."""

    def __init__(self) -> None:
        self._items: dict[type[AsyncCloseable], AsyncCloseable] = {}

    def get(self, kind: type[R], factory: Callable[[], R]) -> R:
        """The session's ``kind`` resource, created with ``factory`` on first use."""
        item = self._items.get(kind)
        if item is None:
            item = factory()
            self._items[kind] = item
        assert isinstance(item, kind)
        return item

    def find(self, kind: type[R]) -> R | None:
        """The session's ``kind`` resource if one was created, else None."""
        item = self._items.get(kind)
        return item if isinstance(item, kind) else None

    async def aclose(self) -> None:
        """Close every resource (newest first); a failure is logged, the rest still close."""
        items = list(self._items.values())
        self._items.clear()
        for item in reversed(items):
            try:
                await item.aclose()
            except Exception:
                log.exception("closing %s failed", type(item).__name__)
