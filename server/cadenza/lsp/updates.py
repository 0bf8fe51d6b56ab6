"""Engine events → ``cadenza/sessionUpdate`` payloads, progress messages and session-log lines.

The update shapes are declared in ``cadenza.schema.updates``; this module says which event
becomes which update. Session updates are what the person follows in an agent panel (ACP's
rule for ``session/update``): a new movement is like ACP's mode change, and a compaction
changes what the agent remembers, so both are updates. Steps go to work-done progress only;
tool-cache lookups, permission verdicts and memory checkpoints are the agent's bookkeeping:
they go to the session log (``window/logMessage``) and the transcript only. The mapping is an
exhaustive ``match`` over the engine's event union: a new event kind is a type error here
until it is given its update (or None). Pure functions: no I/O here.
"""

from __future__ import annotations

from pathlib import Path
from typing import assert_never

from cadenza.host.ports import (
    Activity,
    AgentMessageChunk,
    CandidatesTried,
    CheckpointWritten,
    CheckRan,
    ContextCompacted,
    ContractRepaired,
    FileEdited,
    FilesSeen,
    ModelReplied,
    MovementStarted,
    PermissionDecided,
    PlanUpdated,
    RulesLoaded,
    SessionEvent,
    SessionFinished,
    SessionResumed,
    StepStarted,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
    WorkspaceWaited,
    duration,
)
from cadenza.schema import updates as wire
from cadenza.secrets import redact_then_cut

PROGRESS_END_CHARS = 300
"""Longest ``end`` message of a progress (characters); the full text is in ``session_end``."""


def session_update(event: SessionEvent, root: Path) -> wire.SessionUpdate | None:
    """The ``cadenza/sessionUpdate`` payload for ``event``, or None.

    Steps go to progress only; tool-cache lookups, permission verdicts and checkpoints to the
    session log only (``log_line``).

    Args:
        event: An engine event.
        root: The session's workspace root; diff paths are made absolute against it (ACP
            diffs carry absolute paths).
    """
    match event:
        case (
            AgentMessageChunk()
            | ToolCallStarted()
            | ToolCallFinished()
            | FileEdited()
            | WorkspaceWaited()
        ):
            return _call_update(event, root)
        case ModelReplied() | ContractRepaired():
            return _reply_update(event)
        case MovementStarted() | ContextCompacted() | SessionResumed() | SessionFinished():
            return _lifecycle_update(event)
        case CandidatesTried():
            return wire.Candidates(
                step=event.step,
                tried=event.tried,
                kept=event.kept,
                passed=event.passed,
                why=event.why,
                of=event.of,
            )
        case CheckRan():
            return wire.Check(
                name=event.name, status=event.status, detail=event.detail, refused=event.refused
            )
        case PlanUpdated():
            entries = [wire.PlanEntry(content=e.content, status=e.status) for e in event.entries]
            return wire.Plan(entries=entries)
        case RulesLoaded():
            # Only when rule files were loaded: a workspace without any sees no extra update.
            return wire.Rules(files=event.files, truncated=event.truncated) if event.files else None
        case (
            StepStarted()
            | Activity()
            | ToolCacheLookup()
            | CheckpointWritten()
            | FilesSeen()
            | PermissionDecided()
        ):
            return None
        case _:
            assert_never(event)


def _call_update(
    event: AgentMessageChunk | ToolCallStarted | ToolCallFinished | FileEdited | WorkspaceWaited,
    root: Path,
) -> wire.SessionUpdate:
    """The update of the model's text or of one tool call (a wait: its text, no status)."""
    match event:
        case AgentMessageChunk():
            return wire.AgentMessageChunk(content=wire.TextBlock(text=event.text))
        case ToolCallStarted():
            return wire.ToolCall(
                tool_call_id=event.tool_call_id,
                name=event.name,
                title=event.title,
                kind=event.tool_kind,
                status="in_progress",
                raw_input=wire.raw_input(event.raw_input),
            )
        case ToolCallFinished():
            return wire.ToolCallUpdate(
                tool_call_id=event.tool_call_id,
                status=event.status,
                content=[wire.ToolOutput(content=wire.TextBlock(text=event.content))],
                observation=event.observation,
                summary=event.summary or None,
            )
        case FileEdited():
            return wire.ToolCallUpdate(tool_call_id=event.tool_call_id, content=_diffs(event, root))
        case WorkspaceWaited():
            return wire.ToolCallUpdate(
                tool_call_id=event.tool_call_id,
                content=[wire.ToolOutput(content=wire.TextBlock(text=event.text))],
            )
        case _:
            assert_never(event)


def _diffs(event: FileEdited, root: Path) -> list[wire.ToolCallContent]:
    """The diffs of one edit: the whole texts, or one per hunk with its lines (a large file)."""
    path = str(root / event.path)
    if event.hunks is None:
        return [wire.ToolDiff(path=path, old_text=event.old_text, new_text=event.new_text)]
    return [
        wire.ToolDiff(
            path=path,
            old_text=h.old_text,
            new_text=h.new_text,
            old_line=h.old_line,
            new_line=h.new_line,
        )
        for h in event.hunks
    ]


def _reply_update(event: ModelReplied | ContractRepaired) -> wire.SessionUpdate:
    """The update of a model reply: what it held, or the repair of a contract miss."""
    match event:
        case ModelReplied():
            return wire.ModelReply(
                step=event.step,
                tool_calls=event.tool_calls,
                finish_reason=event.finish_reason,
                prompt_tokens=event.prompt_tokens,
                completion_tokens=event.completion_tokens,
                cost=wire.Cost(amount=event.cost, currency=event.currency or "USD")
                if event.cost is not None
                else None,
                context_size=event.context_size,
            )
        case ContractRepaired():
            return wire.Repair(step=event.step, reason=event.reason, recovered=event.recovered)
        case _:
            assert_never(event)


def _lifecycle_update(
    event: MovementStarted | ContextCompacted | SessionResumed | SessionFinished,
) -> wire.SessionUpdate:
    """The update of an event about the session as a whole rather than one tool call."""
    match event:
        case MovementStarted():
            return wire.Movement(
                workflow=event.workflow,
                movement=event.movement,
                index=event.index,
                reason=event.reason,
            )
        case ContextCompacted():
            return wire.Compaction(
                tokens_before=event.tokens_before,
                tokens_after=event.tokens_after,
                messages_summarized=event.messages_summarized,
            )
        case SessionResumed():
            return wire.SessionResume(
                after=event.after, reply=event.reply, kind=wire.resume_kind(event.after)
            )
        case SessionFinished():
            return wire.SessionEnd.of(event)
        case _:
            assert_never(event)


def progress_report(event: SessionEvent, movement: str | None = None) -> str | None:
    """The work-done progress ``report`` message for ``event``, or None.

    A step reads ``plan · step 3/25`` (the running movement, then the session's step count;
    ``step 3/25`` when no movement is known), and the run's time against its budget when it
    has one (``· 2 min 10 s of 10 min``); while the model writes, ``plan · step 3/25 ·
    writing an edit, 180 tokens`` (the same time after it); a tool call reads its title, e.g.
    ``reading src/app.py``, and a call that waits for the workspace says for whom. Editors
    show the latest report only, so the movement rides on every step report rather than on
    one report of its own.

    Args:
        event: An engine event.
        movement: The name of the movement that runs, if known.
    """
    if isinstance(event, StepStarted | Activity):
        run_step = event.run_step or event.step if isinstance(event, StepStarted) else event.step
        parts = [movement] if movement else []
        parts.append(f"step {run_step}/{event.max_steps}")  # this turn's budget
        if isinstance(event, Activity):
            tokens = f"{event.tokens} token{'' if event.tokens == 1 else 's'}"
            parts.append(f"{event.doing}, {tokens}" if event.tokens else event.doing)
        if event.budget_s is not None:
            parts.append(f"{duration(event.elapsed_s)} of {duration(event.budget_s)}")
        return " · ".join(parts)
    if isinstance(event, ToolCallStarted):
        return event.title
    if isinstance(event, WorkspaceWaited):
        return event.text
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
    return redact_then_cut(text, PROGRESS_END_CHARS - 1)
