"""The ``Editor`` port: what the engine needs from whoever hosts it (LSP face, headless, tests)."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True, kw_only=True)
class CommandChange:
    """One file a command changed, as recorded for review and undo.

    Attributes:
        path: Workspace-relative, ``/``-separated.
        old_text: Its text before the command; None when the command created it.
        new_text: Its text after; ``""`` when the command deleted it.
        deleted: The command deleted it.
    """

    path: str
    old_text: str | None
    new_text: str
    deleted: bool = False


class CommandWatch(Protocol):
    """Records what a command changes in the workspace (the host's checkpoint).

    ``before`` is awaited before a command runs and ``after`` once it ended, however it ended
    (also when it failed, timed out or was cancelled).
    """

    async def before(self, command: str) -> None:
        """Note the workspace before ``command`` (its text, for what the person is told) runs."""
        ...

    async def after(self) -> list[CommandChange]:
        """Record the files the command changed; the text files, in path order."""
        ...
