"""The ``Editor`` port: what the engine needs from whoever hosts it (LSP face, headless, tests)."""

from __future__ import annotations

from typing import Protocol

from cadenza.engine.events import SessionEvent
from cadenza.engine.permissions import PermissionAnswer, PermissionRequest
from cadenza.tools.host import ToolHost


class Editor(ToolHost, Protocol):
    """The tool host, the permission prompt and an event sink."""

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask the person whether a gated tool call may run (ACP ``request_permission``).

        Cancelling the waiter withdraws the prompt (a late answer is ignored).
        """
        ...

    def publish(self, event: SessionEvent) -> None:
        """Deliver one event (in order; must not block)."""
        ...
