"""A stored session's history as ``cadenza/sessionUpdate`` payloads, for ``cadenza.loadSession``.

The replay follows the transcript's order: the person's messages (the task, answers) as
``user_message_chunk``, the assistant's text as ``agent_message_chunk`` (the transcript keeps
whole replies, not the streamed chunks), and every recorded event as the update it was sent
as live (``tool_call``, ``tool_call_update`` with results and diffs, ``movement``,
``session_resume``, ``session_end``...). ACP's ``session/load`` replays the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cadenza.host.ports import EventRecord, MessageRecord, SessionSummary, TranscriptRecord
from cadenza.lsp.live import LspLive
from cadenza.lsp.updates import session_update
from cadenza.messages import AssistantMessage, UserMessage
from cadenza.schema.commands import SessionInfo
from cadenza.schema.outcome import WAITING
from cadenza.schema.updates import AgentMessageChunk as AgentMessageChunkUpdate
from cadenza.schema.updates import SessionUpdate
from cadenza.schema.updates import TextBlock as TextContent
from cadenza.schema.updates import UserMessageChunk as UserMessageChunkUpdate

PERSON_TAGS = frozenset({"task", "answer", "steer"})
"""User messages the person wrote (the rest are Cadenza's own: movements, checkpoints)."""


def replay_updates(records: Iterable[TranscriptRecord], root: Path) -> list[SessionUpdate]:
    """The updates that show a stored session again, in transcript order.

    Args:
        records: The session's transcript records.
        root: Its workspace root (diff paths are made absolute against it).
    """
    updates: list[SessionUpdate] = []
    for record in records:
        if isinstance(record, MessageRecord):
            message = record.message
            if isinstance(message, UserMessage) and message.tag in PERSON_TAGS:
                updates.append(UserMessageChunkUpdate(content=TextContent(text=message.content)))
            elif isinstance(message, AssistantMessage) and message.content:
                updates.append(AgentMessageChunkUpdate(content=TextContent(text=message.content)))
        elif isinstance(record, EventRecord):
            update = session_update(record.event, root)
            if update is not None:
                updates.append(update)
    return updates


def session_info(summary: SessionSummary, live: LspLive | None) -> SessionInfo:
    """The session as ``cadenza.listSessions`` lists it (a live one with its state now)."""
    state = live.state if live is not None else summary.state
    question = None
    if live is not None and live.waiting and live.outcome is not None:
        question = live.outcome.missing_info or live.outcome.message
    elif state in WAITING and summary.last_message:
        question = summary.last_message
    return SessionInfo(
        session_id=summary.session_id,
        task=summary.task,
        state=state,
        started=summary.started.isoformat(),
        workflow=summary.workflow,
        model=summary.model,
        root=summary.root,
        question=question,
    )
