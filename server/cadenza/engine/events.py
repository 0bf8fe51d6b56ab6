"""Typed session events: everything that happens in a session, as one pydantic union.

The editor faces turn them into notifications (``cadenza/sessionUpdate`` with ACP's update
kinds, work-done progress); the transcript stores them as JSONL through the same adapter.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from cadenza.tools.base import ToolKind

StopReason = Literal["end_turn", "max_steps", "cancelled", "error"]
"""Why a session ended: a final answer, the step bound, a cancel, or a provider/internal error."""

ToolStatus = Literal["pending", "in_progress", "completed", "failed"]


class StepStarted(BaseModel):
    """A model request is about to leave (step numbers start at 1)."""

    kind: Literal["step"] = "step"
    step: int
    max_steps: int


class AgentMessageChunk(BaseModel):
    """Assistant text, streamed or whole."""

    kind: Literal["agent_message_chunk"] = "agent_message_chunk"
    text: str


class ToolCallStarted(BaseModel):
    """The model called a tool (ACP ``tool_call``)."""

    kind: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    title: str
    tool_kind: ToolKind
    raw_input: str


class ToolCallFinished(BaseModel):
    """A tool call finished (ACP ``tool_call_update``); ``content`` is what the model reads."""

    kind: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolStatus
    content: str


class FileEdited(BaseModel):
    """The editor applied a change (``path`` relative to the workspace root)."""

    kind: Literal["edit"] = "edit"
    tool_call_id: str
    path: str
    old_text: str | None
    new_text: str


class SessionFinished(BaseModel):
    """The session ended; ``message`` is the final answer or the error."""

    kind: Literal["session_end"] = "session_end"
    stop_reason: StopReason
    message: str = ""
    steps: int = 0


SessionEvent = Annotated[
    StepStarted
    | AgentMessageChunk
    | ToolCallStarted
    | ToolCallFinished
    | FileEdited
    | SessionFinished,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[SessionEvent] = TypeAdapter(SessionEvent)
