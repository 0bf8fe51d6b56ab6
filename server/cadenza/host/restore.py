"""A session's state rebuilt from its transcript, so it can go on after a server restart.

What a resumed session needs is in the records: the conversation (``message`` records, made
replay-safe by ``sanitize_history``), how its last run ended (the last ``session_end`` event:
the question, or the browser session a person acts in), the movement it was in (the last
``movement`` event before that end), the files the model knew whole then (``files_seen``),
the person's answers that hold for the session (the
test command allowed or not: ``engine.project_tests.answered_tests``), and every tool-call id
it used (the engine's own calls, such as a done check's test run, are in the events only), so
a call of its next turn never takes one again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cadenza.engine.events import (
    FilesSeen,
    MovementStarted,
    SessionFinished,
    SessionResumed,
    StepStarted,
    ToolCallStarted,
)
from cadenza.engine.history import sanitize_history
from cadenza.engine.project_tests import answered_tests
from cadenza.engine.transcript import (
    EventRecord,
    SessionStartRecord,
    TranscriptRecord,
    history_from_records,
)
from cadenza.messages import Message, from_person
from cadenza.schema.outcome import SessionOutcome


class NotRestorable(ValueError):
    """The transcript has no ``session_start`` record (or no conversation) to go on from."""


@dataclass(frozen=True, kw_only=True)
class RestoredState:
    """What ``Session(history=..., last=...)`` needs to go on.

    Attributes:
        start: The session's ``session_start`` record (task, root, workflow, model).
        history: The conversation, sanitized for replay (no tool call without its result).
        last: How its last run ended; None when the last run never ended (the server died
            mid-run).
        stopped_in: The movement the session was in when its last run ended.
        steps: Model requests made so far.
        turns: The person's turns so far (messages they wrote: the task, answers).
        tests_allowed: The test command the person allowed for the session ("" none).
        tests_declined: Why the tests may not run in the session ("": they may).
        call_ids: Every tool-call id its events name (the model's calls and the engine's own).
        seen: The files the model knew whole when its last run ended, with the digest of
            their text then (``FilesSeen``; empty when none, or in older transcripts).
    """

    start: SessionStartRecord
    history: list[Message]
    last: SessionOutcome | None
    stopped_in: str | None
    steps: int
    turns: int = 0
    tests_allowed: str = ""
    tests_declined: str = ""
    call_ids: frozenset[str] = frozenset()
    seen: Mapping[str, str] = field(default_factory=dict)


def restore_state(records: Sequence[TranscriptRecord]) -> RestoredState:
    """Rebuild a session's state from its transcript records (in file order).

    Raises:
        NotRestorable: No ``session_start`` record, or no message recorded.
    """
    start = next((r for r in records if isinstance(r, SessionStartRecord)), None)
    if start is None:
        raise NotRestorable("the transcript has no session_start record")
    recorded = history_from_records(records)
    history = sanitize_history(recorded)
    if not history:
        raise NotRestorable("the transcript records no conversation")
    movement: str | None = None
    steps = 0
    last: SessionOutcome | None = None
    stopped_in: str | None = None
    call_ids: set[str] = set()
    for record in records:
        if not isinstance(record, EventRecord):
            continue
        event = record.event
        if isinstance(event, MovementStarted):
            movement = event.movement
        elif isinstance(event, StepStarted):
            steps = max(steps, event.step)
        elif isinstance(event, SessionResumed):
            last = None  # it ran again; an end after this one says how that run ended
        elif isinstance(event, SessionFinished):
            last, stopped_in = event.outcome(), movement
        elif isinstance(event, ToolCallStarted):
            call_ids.add(event.tool_call_id)
    events = [r.event for r in records if isinstance(r, EventRecord)]
    seen = next((e.files for e in reversed(events) if isinstance(e, FilesSeen)), {})
    turns = sum(1 for message in recorded if from_person(message))
    allowed, declined = answered_tests(events)
    return RestoredState(
        start=start,
        history=history,
        last=last,
        stopped_in=stopped_in,
        steps=steps,
        turns=turns,
        tests_allowed=allowed,
        tests_declined=declined,
        call_ids=frozenset(call_ids),
        seen=seen,
    )
