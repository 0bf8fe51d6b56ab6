"""Engine events → ``cadenza/sessionUpdate`` payloads, progress messages and session-log lines.

The update kinds and field names follow the Agent Client Protocol's ``session/update``
(``agent_message_chunk``, ``tool_call``, ``tool_call_update``), plus Cadenza's ``movement``,
``compaction`` and ``session_end``. Session updates are what the person follows in an agent
panel (ACP's rule for ``session/update``): a new movement is like ACP's mode change, and a
compaction changes what the agent remembers, so both are updates. Tool-cache lookups and
memory checkpoints are the agent's bookkeeping: they go to the session log
(``window/logMessage``) and the transcript only. Clients ignore update kinds they do not know.
Pure functions over pydantic models: no I/O here, so the mapping is testable alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from cadenza.engine.events import (
    AgentMessageChunk,
    CheckpointWritten,
    ContextCompacted,
    ContractRepaired,
    FileEdited,
    ModelReplied,
    MovementStarted,
    Observation,
    PermissionDecided,
    SessionEvent,
    SessionFinished,
    SessionResumed,
    StepStarted,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
)
from cadenza.lsp.params import WireModel
from cadenza.tools.base import ToolKind
from cadenza.types import StopReason, ToolStatus

PROGRESS_END_CHARS = 300
"""Longest ``end`` message of a progress (characters); the full text is in ``session_end``."""


class SparseWireModel(WireModel):
    """A wire model whose top-level fields that are None are left out of the JSON."""

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None}


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


class UserMessageChunkUpdate(WireModel):
    """``user_message_chunk``: the person's text (the task, an answer).

    Sent when ``cadenza.loadSession`` replays a history (as ACP's ``session/load`` does).
    """

    session_update: Literal["user_message_chunk"] = "user_message_chunk"
    content: TextContent


class AgentMessageChunkUpdate(WireModel):
    """``agent_message_chunk``: assistant text."""

    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    content: TextContent


class ToolCallUpdateStart(WireModel):
    """``tool_call``: the model called a tool (``raw_input``: its arguments as parsed JSON).

    ``name`` is the tool's name as the model called it (ACP has ``title`` and ``kind`` only).
    """

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    title: str
    kind: ToolKind
    status: ToolStatus
    raw_input: Any


class ToolCallUpdateProgress(SparseWireModel):
    """``tool_call_update``: a result or a diff for an earlier ``tool_call``.

    ``status`` is omitted on the wire when None (a diff published while the call still runs).
    ``observation`` is set when the engine answered the call itself instead of running it
    (``repeat``, ``cut``, ``invalid``, ``not_allowed``), omitted otherwise.
    """

    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolStatus | None = None
    content: list[ToolContent | DiffContent]
    observation: Observation | None = None


class ModelReplyUpdate(SparseWireModel):
    """``model_reply``: the model answered step ``step``.

    ``tool_calls``: how many calls the reply held (0: the turn ends); ``finish_reason`` as the
    provider said it (``length``: cut by the token limit); tokens as the provider reported
    them (omitted when it did not).
    """

    session_update: Literal["model_reply"] = "model_reply"
    step: int
    tool_calls: int
    finish_reason: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class RepairUpdate(WireModel):
    """``repair``: a contract miss (``reason`` ``cut``) was repaired once.

    ``recovered``: the second reply kept the contract.
    """

    session_update: Literal["repair"] = "repair"
    step: int
    reason: str
    recovered: bool


class MovementUpdate(WireModel):
    """``movement``: a movement of the workflow starts.

    ``index`` counts the movements run so far, from 1 (a movement run twice, e.g. ``implement``
    again after ``review``, gets a new index); ``reason`` is why the previous movement handed
    over (empty for the first movement).
    """

    session_update: Literal["movement"] = "movement"
    workflow: str
    movement: str
    index: int
    reason: str


class CompactionUpdate(WireModel):
    """``compaction``: older turns were summarized to relieve context pressure (tokens)."""

    session_update: Literal["compaction"] = "compaction"
    tokens_before: int
    tokens_after: int
    messages_summarized: int


class SessionResumeUpdate(WireModel):
    """``session_resume``: a session that waited (or ended) runs again.

    ``after`` is the stop reason it resumes from; ``reply`` what the person gave (the answer,
    or what they did in the browser; may be empty).
    """

    session_update: Literal["session_resume"] = "session_resume"
    after: StopReason
    reply: str


class SessionEndUpdate(SparseWireModel):
    """``session_end``: the session stopped; ``message``: the answer, question or error.

    ``missing_info`` and ``why_no_default`` come with ``needs_user_input`` when the agent asked
    through ``complete``; ``browser_session_id`` and ``url`` with ``waiting_human``; they are
    omitted on the wire otherwise. After ``needs_user_input`` and ``waiting_human`` the session
    waits: ``cadenza.replySession`` (or the answered prompt) resumes it.
    """

    session_update: Literal["session_end"] = "session_end"
    stop_reason: StopReason
    message: str
    steps: int
    missing_info: str | None = None
    why_no_default: str | None = None
    browser_session_id: str | None = None
    url: str | None = None
    act_url: str | None = None


SessionUpdate = Annotated[
    UserMessageChunkUpdate
    | AgentMessageChunkUpdate
    | ToolCallUpdateStart
    | ToolCallUpdateProgress
    | ModelReplyUpdate
    | RepairUpdate
    | MovementUpdate
    | CompactionUpdate
    | SessionResumeUpdate
    | SessionEndUpdate,
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
    """The ``cadenza/sessionUpdate`` payload for ``event``, or None.

    Steps go to progress only; tool-cache lookups and checkpoints to the session log only
    (``log_line``).

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
            name=event.name,
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
            observation=event.observation,
        )
    if isinstance(event, ModelReplied):
        return ModelReplyUpdate(
            step=event.step,
            tool_calls=event.tool_calls,
            finish_reason=event.finish_reason,
            prompt_tokens=event.prompt_tokens,
            completion_tokens=event.completion_tokens,
        )
    if isinstance(event, ContractRepaired):
        return RepairUpdate(step=event.step, reason=event.reason, recovered=event.recovered)
    if isinstance(event, FileEdited):
        diff = DiffContent(
            path=str(root / event.path), old_text=event.old_text, new_text=event.new_text
        )
        return ToolCallUpdateProgress(tool_call_id=event.tool_call_id, content=[diff])
    if isinstance(event, MovementStarted | ContextCompacted | SessionFinished | SessionResumed):
        return _lifecycle_update(event)
    return None


def _lifecycle_update(
    event: MovementStarted | ContextCompacted | SessionFinished | SessionResumed,
) -> SessionUpdate:
    """The update of an event about the session as a whole rather than one tool call."""
    if isinstance(event, MovementStarted):
        return MovementUpdate(
            workflow=event.workflow, movement=event.movement, index=event.index, reason=event.reason
        )
    if isinstance(event, ContextCompacted):
        return CompactionUpdate(
            tokens_before=event.tokens_before,
            tokens_after=event.tokens_after,
            messages_summarized=event.messages_summarized,
        )
    if isinstance(event, SessionResumed):
        return SessionResumeUpdate(after=event.after, reply=event.reply)
    return SessionEndUpdate(
        stop_reason=event.stop_reason,
        message=event.message,
        steps=event.steps,
        missing_info=event.missing_info,
        why_no_default=event.why_no_default,
        browser_session_id=event.browser_session_id,
        url=event.url,
        act_url=event.act_url,
    )


def progress_report(event: SessionEvent, movement: str | None = None) -> str | None:
    """The work-done progress ``report`` message for ``event``, or None.

    A step reads ``plan · step 3/25`` (the running movement, then the session's step count;
    ``step 3/25`` when no movement is known); a tool call reads its title, e.g.
    ``reading src/app.py``. Editors show the latest report only, so the movement rides on
    every step report rather than on one report of its own.

    Args:
        event: An engine event.
        movement: The name of the movement that runs, if known.
    """
    if isinstance(event, StepStarted):
        step = f"step {event.step}/{event.max_steps}"
        return f"{movement} · {step}" if movement else step
    if isinstance(event, ToolCallStarted):
        return event.title
    return None


def log_line(event: SessionEvent) -> str | None:
    """The session-log line (``window/logMessage``, type Log) for ``event``, or None.

    Tool-cache lookups, compactions and memory checkpoints: what the agent did to its own
    context, for whoever reads the log.
    """
    if isinstance(event, ToolCacheLookup):
        outcome = "hit" if event.hit else "miss"
        return f"tool cache {outcome}: {event.name} (call {event.tool_call_id})"
    if isinstance(event, ContextCompacted):
        return (
            f"context compacted: {event.messages_summarized} messages summarized, "
            f"{event.tokens_before} → {event.tokens_after} tokens"
        )
    if isinstance(event, CheckpointWritten):
        return f"checkpoint after movement {event.movement}: {event.note}"
    if isinstance(event, PermissionDecided):
        how = f" ({event.option})" if event.option else ""
        return f"permission for {event.name} (call {event.tool_call_id}): {event.verdict}{how}"
    return None


def progress_end(event: SessionFinished) -> str:
    """The progress ``end`` message: the stop reason, then the message, bounded in length.

    For a question (``needs_user_input``) the message is what is missing.
    """
    said = event.missing_info or event.message  # a question: what the agent needs
    text = f"{event.stop_reason}: {said}" if said else event.stop_reason
    if len(text) > PROGRESS_END_CHARS:
        text = text[: PROGRESS_END_CHARS - 1] + "…"
    return text
