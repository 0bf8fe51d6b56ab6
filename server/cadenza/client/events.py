"""What the headless client tells its observer (the CLI display, a test, another program).

Session updates arrive as the wire models of :mod:`cadenza.schema.updates`; the rest are the
client's own observations: work-done progress, edits written or refused, questions and
permission requests answered, and the server's messages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cadenza.client.edits import FileChange
from cadenza.schema.updates import (
    AgentMessageChunk,
    Candidates,
    Check,
    Compaction,
    ModelReply,
    Movement,
    OtherUpdate,
    Plan,
    Repair,
    Rules,
    SessionEnd,
    SessionResume,
    ToolCall,
    ToolCallUpdate,
    UserMessageChunk,
)


@dataclass(frozen=True, kw_only=True)
class Progress:
    """One ``$/progress`` value of work-done progress (LSP 3.17, "Work Done Progress").

    Attributes:
        kind: ``begin``, ``report`` or ``end``.
        title: The operation's title (``begin`` only).
        message: What is happening now, e.g. ``plan · step 3/25`` or ``editing app.py``.
        percentage: 0-100, when the server reports one.
    """

    kind: Literal["begin", "report", "end"]
    title: str | None = None
    message: str | None = None
    percentage: int | None = None


@dataclass(frozen=True, kw_only=True)
class EditWritten:
    """A ``workspace/applyEdit`` was written to disk; ``changes`` lists the files that differ."""

    label: str | None
    changes: tuple[FileChange, ...]


@dataclass(frozen=True, kw_only=True)
class EditRejected:
    """A ``workspace/applyEdit`` was answered ``applied: false``; nothing was written."""

    label: str | None
    reason: str


@dataclass(frozen=True, kw_only=True)
class UserAsked:
    """The server asked the person something; ``answer`` None means declined."""

    question: str
    answer: str | None


@dataclass(frozen=True, kw_only=True)
class PermissionAnswered:
    """The server asked whether a tool call may run (``cadenza/requestPermission``).

    Attributes:
        tool: The tool's name (None: no ``tool_call`` update named the call).
        tool_call_id: The call's id.
        title: The call's title, e.g. ``run python -m pytest``.
        answer: The selected option's name, e.g. ``Allow once`` (None: cancelled).
        kind: The selected option's kind, e.g. ``allow_once`` (None: cancelled).
        rule: The person's rule that answered, as written (``run_command:rm *``,
            ``--allow-all``); "" when the person (or no one) answered.
        allow_rule: The ``--allow`` rule that would let such a call run ("" when none would).
    """

    tool: str | None
    tool_call_id: str
    title: str
    answer: str | None
    kind: str | None
    rule: str = ""
    allow_rule: str = ""

    @property
    def refusal(self) -> str:
        """Why the call did not run, for the person ("" when it was allowed)."""
        if self.kind is not None and not self.kind.startswith("reject"):
            return ""
        if self.rule:
            return f"refused by your rule `{self.rule}`"
        return "you rejected it" if self.kind is not None else "not run: no one allowed it"


@dataclass(frozen=True, kw_only=True)
class ServerMessage:
    """``window/showMessage`` or ``window/logMessage``; ``level`` names the ``MessageType``."""

    level: Literal["error", "warning", "info", "log", "debug"]
    message: str
    shown: bool


ClientEvent = (
    UserMessageChunk
    | AgentMessageChunk
    | ToolCall
    | ToolCallUpdate
    | ModelReply
    | Repair
    | Candidates
    | Check
    | Rules
    | Movement
    | Compaction
    | SessionResume
    | SessionEnd
    | Plan
    | OtherUpdate
    | Progress
    | EditWritten
    | EditRejected
    | UserAsked
    | PermissionAnswered
    | ServerMessage
)

Observer = Callable[[ClientEvent], None]
"""Receives every event in arrival order, on the event loop; it must not block."""


def ignore_events(event: ClientEvent) -> None:
    """The observer that does nothing."""
