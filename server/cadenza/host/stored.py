"""Stored sessions: their transcripts read back, summarised and made ready to go on.

Every face lists, loads and revives stored sessions from the same transcripts
(``<user state dir>/sessions/<sessionId>.jsonl``). The functions here turn each way reading
one can fail into ``Unavailable`` with a sentence for the person, so a face only words it in
its protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cadenza.engine.events import MovementStarted
from cadenza.engine.session_list import SessionSummary, summary_of
from cadenza.engine.transcript import (
    EventRecord,
    TranscriptError,
    TranscriptRecord,
    read_transcript,
    transcript_path,
)
from cadenza.host.errors import Unavailable
from cadenza.host.restore import NotRestorable, RestoredState, restore_state
from cadenza.schema.outcome import WAITING


def read_records(session_id: str) -> list[TranscriptRecord]:
    """The transcript records of ``session_id``, in file order.

    Raises:
        Unavailable: Unknown, an unsafe id, or a damaged or unreadable transcript.
    """
    try:
        return read_transcript(transcript_path(session_id))
    except ValueError:  # an unsafe id, or a damaged transcript
        raise Unavailable(f"no readable session {session_id!r}") from None
    except FileNotFoundError:
        raise Unavailable(f"unknown session {session_id!r}") from None
    except OSError as exc:
        raise Unavailable(f"session {session_id}: {exc}") from None


def summary(session_id: str, records: list[TranscriptRecord]) -> SessionSummary:
    """What the stored session is and how it stands (task, state, model, workflow...).

    Raises:
        Unavailable: The records do not describe a session.
    """
    try:
        return summary_of(session_id, records)
    except TranscriptError as exc:
        raise Unavailable(str(exc)) from None


def restored(session_id: str, records: Sequence[TranscriptRecord]) -> RestoredState:
    """The stored session's state, rebuilt so it can go on.

    Raises:
        Unavailable: Its transcript records no start or no conversation.
    """
    try:
        return restore_state(records)
    except NotRestorable as exc:
        raise Unavailable(f"session {session_id} cannot go on: {exc}") from None


def stored_waiting(session_id: str) -> tuple[RestoredState, SessionSummary]:
    """A stored session that waits for the person, rebuilt from its transcript.

    Raises:
        Unavailable: Unknown, unreadable, not waiting, or not restorable.
    """
    records = read_records(session_id)
    found = summary(session_id, records)
    if found.state not in WAITING:
        raise Unavailable(f"session {session_id} is {found.state}, not waiting for a reply")
    return restored(session_id, records), found


def stored_session(session_id: str) -> tuple[RestoredState, SessionSummary, str]:
    """A stored session rebuilt to go on.

    After a turn that ended (any stop reason), one cut by a server stop (``interrupted``), or
    one that waits for the person.

    Returns:
        Its state, its summary, and the workflow it ran last.

    Raises:
        Unavailable: Unknown, unreadable, or not restorable.
    """
    records = read_records(session_id)
    found = summary(session_id, records)
    state = restored(session_id, records)
    return state, found, last_workflow(records, found.workflow)


def state_of(session_id: str) -> str | None:
    """The stored session's state; None when it is unknown or unreadable."""
    try:
        records = read_records(session_id)
        return summary(session_id, records).state
    except Unavailable:
        return None


def last_workflow(records: Sequence[TranscriptRecord], default: str) -> str:
    """The workflow the stored session ran last (a workflow change shows in its movements)."""
    name = default
    for record in records:
        if isinstance(record, EventRecord) and isinstance(record.event, MovementStarted):
            name = record.event.workflow
    return name


def beside_transcript(session_id: str, suffix: str) -> Path:
    """A file kept beside the session's transcript: ``<sessions folder>/<sessionId><suffix>``.

    Raises:
        ValueError: The session id is not a plain file name.
    """
    return transcript_path(session_id).with_suffix(suffix)
