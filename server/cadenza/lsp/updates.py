"""Engine events → ``cadenza/sessionUpdate`` payloads and work-done progress messages.

The update kinds and field names follow the Agent Client Protocol's ``session/update``
(``agent_message_chunk``, ``tool_call``, ``tool_call_update``), plus Cadenza's ``session_end``.
Pure functions over pydantic models: no I/O here, so the mapping is testable alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from cadenza.engine.events import (
    AgentMessageChunk,
    FileEdited,
    SessionEvent,
    SessionFinished,
    StepStarted,
    StopReason,
    ToolCallFinished,
    ToolCallStarted,
    ToolStatus,
)
from cadenza.lsp.params import WireModel
from cadenza.tools.base import ToolKind

PROGRESS_END_CHARS = 300
"""Longest ``end`` message of a progress (characters); the full text is in ``session_end``."""


class TextContent(WireModel):
    """ACP ``ContentBlock`` of type text."""

    type: Literal["text"] = "text"
    text: str


class ToolContent(WireModel):
    """ACP ``ToolCallContent`` of type content (what the tool returned)."""

    type: Literal["content"] = "content"
    content: TextContent


class DiffContent(WireModel):
    """ACP ``ToolCallContent`` of type diff; ``old_text`` is null for a new file."""

    type: Literal["diff"] = "diff"
    path: str = Field(description="Absolute file path.")
    old_text: str | None
    new_text: str


class AgentMessageChunkUpdate(WireModel):
    """``agent_message_chunk``: assistant text."""

    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    content: TextContent


class ToolCallUpdateStart(WireModel):
    """``tool_call``: the model called a tool (``raw_input``: its arguments as parsed JSON)."""

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    kind: ToolKind
    status: ToolStatus
    raw_input: Any


class ToolCallUpdateProgress(WireModel):
    """``tool_call_update``: a result or a diff for an earlier ``tool_call``.

    ``status`` is omitted on the wire when None (a diff published while the call still runs).
    """

    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolStatus | None = None
    content: list[ToolContent | DiffContent]

    @model_serializer(mode="wrap")
    def _omit_null_status(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("status") is None:
            data.pop("status", None)
        return data


class SessionEndUpdate(WireModel):
    """``session_end``: the session is over; ``message`` is the final answer or the error."""

    session_update: Literal["session_end"] = "session_end"
    stop_reason: StopReason
    message: str
    steps: int


SessionUpdate = Annotated[
    AgentMessageChunkUpdate | ToolCallUpdateStart | ToolCallUpdateProgress | SessionEndUpdate,
    Field(discriminator="session_update"),
]


class SessionUpdateParams(WireModel):
    """Params of the notification ``cadenza/sessionUpdate``."""

    session_id: str
    update: SessionUpdate


def _raw_input(arguments: str) -> Any:
    """The call's arguments as JSON when they parse, else the raw text the model wrote."""
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments


def session_update(event: SessionEvent, root: Path) -> SessionUpdate | None:
    """The ``cadenza/sessionUpdate`` payload for ``event``, or None (steps go to progress only).

    Args:
        event: An engine event.
        root: The session's workspace root; diff paths are made absolute against it (ACP
            diffs carry absolute paths).
    """
    if isinstance(event, AgentMessageChunk):
        return AgentMessageChunkUpdate(content=TextContent(text=event.text))
    if isinstance(event, ToolCallStarted):
        return ToolCallUpdateStart(
            tool_call_id=event.tool_call_id,
            title=event.title,
            kind=event.tool_kind,
            status="in_progress",
            raw_input=_raw_input(event.raw_input),
        )
    if isinstance(event, ToolCallFinished):
        return ToolCallUpdateProgress(
            tool_call_id=event.tool_call_id,
            status=event.status,
            content=[ToolContent(content=TextContent(text=event.content))],
        )
    if isinstance(event, FileEdited):
        diff = DiffContent(
            path=str(root / event.path), old_text=event.old_text, new_text=event.new_text
        )
        return ToolCallUpdateProgress(tool_call_id=event.tool_call_id, content=[diff])
    if isinstance(event, SessionFinished):
        return SessionEndUpdate(
            stop_reason=event.stop_reason, message=event.message, steps=event.steps
        )
    return None


def progress_report(event: SessionEvent) -> str | None:
    """The work-done progress ``report`` message for ``event``, or None.

    A step reads ``step 3/25``; a tool call reads its title, e.g. ``reading src/app.py``.
    """
    if isinstance(event, StepStarted):
        return f"step {event.step}/{event.max_steps}"
    if isinstance(event, ToolCallStarted):
        return event.title
    return None


def progress_end(event: SessionFinished) -> str:
    """The progress ``end`` message: the stop reason, then the message, bounded in length."""
    text = f"{event.stop_reason}: {event.message}" if event.message else event.stop_reason
    if len(text) > PROGRESS_END_CHARS:
        text = text[: PROGRESS_END_CHARS - 1] + "…"
    return text
