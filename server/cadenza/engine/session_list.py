"""The stored sessions: each one's state and summary from its transcript, and the listing.

``cadenza.listSessions`` (LSP) and ``session/list`` (ACP) show these; a session's state is
its last stop reason, ``running`` when it is live in this process, or ``interrupted`` when its
transcript never ended (the process died).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from cadenza.engine.transcript import (
    SUFFIX,
    EventRecord,
    SessionEndRecord,
    SessionStartRecord,
    TranscriptError,
    TranscriptRecord,
    read_transcript,
    transcript_dir,
    transcript_path,
)
from cadenza.types import StopReason

log = logging.getLogger(__name__)


SessionState = StopReason | Literal["running", "interrupted"]
"""The last stop reason of a session, ``running`` (live in this process) or ``interrupted``."""


def session_state(records: Sequence[TranscriptRecord], *, live: bool = False) -> SessionState:
    """The state of a session from its records.

    Args:
        records: The session's records in file order.
        live: True when the session runs in this process now.

    Returns:
        ``running`` when live; else the stop reason of the last record when it is a
        ``session_end``; else ``interrupted`` (never ended, or resumed after its last end and
        never ended again: the process died).
    """
    if live:
        return "running"
    if records and isinstance(records[-1], SessionEndRecord):
        return records[-1].stop_reason
    return "interrupted"


@dataclass(frozen=True, kw_only=True)
class SessionSummary:
    """One stored session, for ``cadenza.listSessions``.

    Attributes:
        session_id: The session id (the file name without ``.jsonl``).
        task: The task it started with.
        state: See ``session_state``.
        started: When it started (UTC).
        workflow: The workflow it ran.
        model: The model it used (``PROVIDER/MODEL``).
        path: The transcript file.
        root: The workspace folder it ran on.
        last_message: What its last ``session_end`` said: the missing information of a
            ``needs_user_input`` question, else the message (the answer, the error...).
    """

    session_id: str
    task: str
    state: SessionState
    started: datetime
    workflow: str
    model: str
    path: Path
    root: str = ""
    last_message: str = ""


def summary_of(
    session_id: str, records: Sequence[TranscriptRecord], *, live: bool = False
) -> SessionSummary:
    """The summary of a session from its records.

    Raises:
        TranscriptError: No ``session_start`` record.
    """
    start = next((r for r in records if isinstance(r, SessionStartRecord)), None)
    if start is None:
        raise TranscriptError(f"session {session_id}: no session_start record")
    ends = [
        r.event for r in records if isinstance(r, EventRecord) and r.event.kind == "session_end"
    ]
    last = ends[-1] if ends else None
    return SessionSummary(
        session_id=session_id,
        task=start.task,
        state=session_state(records, live=live),
        started=start.time,
        workflow=start.workflow,
        model=start.model,
        path=_path(session_id),
        root=start.root,
        last_message=(getattr(last, "missing_info", None) or last.message) if last else "",
    )


def _path(session_id: str) -> Path:
    """The session's transcript file; an empty path for an id that names no file."""
    try:
        return transcript_path(session_id)
    except ValueError:
        return Path()


def _summary(path: Path, live: Collection[str]) -> SessionSummary | None:
    try:
        records = read_transcript(path)
    except (OSError, TranscriptError) as exc:
        log.warning("skipping unreadable transcript %s: %s", path, exc)
        return None
    session_id = path.name.removesuffix(SUFFIX)
    try:
        summary = summary_of(session_id, records, live=session_id in live)
    except TranscriptError:
        return None
    return SessionSummary(**{**summary.__dict__, "path": path})


def list_sessions(
    directory: Path | None = None, *, live: Collection[str] = ()
) -> list[SessionSummary]:
    """The sessions stored in a transcript folder, newest first.

    Files without a ``session_start`` record, or damaged before their last line, are skipped
    (with a warning for the damaged ones); a missing folder has no sessions.

    Args:
        directory: The folder (default ``transcript_dir()``).
        live: Ids of sessions running in this process (their state is ``running``).
    """
    folder = transcript_dir(directory)
    if not folder.is_dir():
        return []
    summaries = [_summary(p, live) for p in sorted(folder.glob(f"*{SUFFIX}"))]
    found = [s for s in summaries if s is not None]
    return sorted(found, key=lambda s: s.started, reverse=True)
