"""The ``Editor`` port: what the engine needs from whoever hosts it (LSP face, headless, tests)."""

from __future__ import annotations

from typing import Protocol

from cadenza.engine.events import SessionEvent
from cadenza.tools.host import ToolHost


class Editor(ToolHost, Protocol):
    """The tool host plus an event sink."""

    def publish(self, event: SessionEvent) -> None:
        """Deliver one event (in order; must not block)."""
        ...
