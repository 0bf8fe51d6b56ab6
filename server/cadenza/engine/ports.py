"""The ``Editor`` port: what the engine needs from whoever hosts it (LSP face, headless, tests)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
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
    """Records what a command changes in the workspace, and keeps that window its own.

    ``before`` is awaited before a command runs; when it returns a reason, the command does
    not run (and ``after`` is not awaited). Otherwise ``after`` is awaited once the command
    ended, however it ended (also when it failed, timed out or was cancelled). An edit call
    runs inside ``editing``. Between ``before`` and ``after`` no other session writes in the
    workspace, and no edit call runs inside another session's command, so what the
    comparison finds is the command's own change (the host's workspace lock).

    ``on_wait`` is told, once, whom the call waits for when another session holds the
    workspace (a sentence such as ``session abc (process 12) is running `make```).
    """

    async def before(self, command: str, on_wait: Callable[[str], None]) -> str | None:
        """Take the workspace and note it before ``command`` runs; None, or why it may not."""
        ...

    async def after(self) -> list[CommandChange]:
        """Record the files the command changed (the text files, in path order); release."""
        ...

    def editing(self, on_wait: Callable[[str], None]) -> AbstractAsyncContextManager[str | None]:
        """Hold the workspace around an edit call; yields None, or why it may not write."""
        ...
