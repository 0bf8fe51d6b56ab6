"""Transcripts: one append-only JSONL file per session, readable after a crash; its records.

Each line is one ``TranscriptRecord`` (a pydantic union tagged by ``type``, camelCase keys),
written whole and flushed before ``append`` returns (``engine.transcript_writer``), so a crash
of the process loses at most the line being written. That line is then the file's last one,
truncated: the reader here skips it, and a writer reopening the file cuts it off before
appending. The session's recorder (``engine.journal``) fsyncs once per step (started at its
``step`` event, before the model request, on a background thread so the event loop never waits
for the disk), at checkpoints and at the end, so a crash of the whole machine loses at most the
last step or two (one fsync per record, on the loop, cost ~2 ms a step: docs/lab/performance.md).
The stored sessions are listed by ``engine.session_list``.

Records, in the order a session writes them:

- ``session_start``: ``{sessionId, task, root, workflow, model, time}``;
- ``turn``: ``{turn, text}`` just before the message that starts a person's turn (the task, an
  answer, a follow-up): the turn's number and the person's own words (without an expanded
  ``/command`` or the editor context), so the turn can be restored and its words given back;
- ``message``: every message appended to the live conversation (``Message`` union);
- ``event``: every session event (``SessionEvent`` union);
- ``checkpoint``: ``{movement, note}``, the memory note written at the end of a movement;
- ``session_end``: ``{stopReason, message}``.

Files live in ``<user state dir>/sessions/<sessionId>.jsonl``; the state dir comes from
``platformdirs.user_state_dir("cadenza")``, which honours ``XDG_STATE_HOME`` on Linux.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from cadenza.engine.events import SessionEvent
from cadenza.messages import Message
from cadenza.types import StopReason

log = logging.getLogger(__name__)

SUFFIX = ".jsonl"
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class TranscriptError(ValueError):
    """A transcript line other than the last is not a valid record (the file was damaged)."""


class _Record(BaseModel):
    # camelCase on disk (sessionId, stopReason), snake_case in Python; both accepted on input.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class SessionStartRecord(_Record):
    """The first record of a session (``time``: UTC, ISO 8601 on disk)."""

    type: Literal["session_start"] = "session_start"
    session_id: str
    task: str
    root: str
    workflow: str
    model: str
    time: datetime = Field(default_factory=lambda: datetime.now(UTC))


class MessageRecord(_Record):
    """A message appended to the live conversation."""

    type: Literal["message"] = "message"
    message: Message


class TurnRecord(_Record):
    """A person's turn starts (1-based ``turn``); ``text``: their own words."""

    type: Literal["turn"] = "turn"
    turn: int
    text: str


class EventRecord(_Record):
    """A session event, as published to the editor."""

    type: Literal["event"] = "event"
    event: SessionEvent


class CheckpointRecord(_Record):
    """A memory checkpoint at the end of a movement: what was done, what is next."""

    type: Literal["checkpoint"] = "checkpoint"
    movement: str
    note: str


class SessionEndRecord(_Record):
    """The session ended (it may resume later, e.g. after ``needs_user_input``)."""

    type: Literal["session_end"] = "session_end"
    stop_reason: StopReason
    message: str = ""


TranscriptRecord = Annotated[
    SessionStartRecord
    | TurnRecord
    | MessageRecord
    | EventRecord
    | CheckpointRecord
    | SessionEndRecord,
    Field(discriminator="type"),
]
TRANSCRIPT_ADAPTER: TypeAdapter[TranscriptRecord] = TypeAdapter(TranscriptRecord)


def encode_record(record: TranscriptRecord) -> bytes:
    """One JSONL line: UTF-8, ending in a line feed, with no other raw line feed inside."""
    return TRANSCRIPT_ADAPTER.dump_json(record, by_alias=True) + b"\n"


def decode_record(line: bytes | str) -> TranscriptRecord:
    """Parse one JSONL line.

    Raises:
        pydantic.ValidationError: Not JSON, or not a record.
    """
    return TRANSCRIPT_ADAPTER.validate_json(line)


def transcript_dir(directory: Path | None = None) -> Path:
    """Where transcripts live: ``directory``, else ``<user state dir>/sessions``."""
    if directory is not None:
        return directory
    return Path(platformdirs.user_state_dir("cadenza")) / "sessions"


def transcript_path(session_id: str, directory: Path | None = None) -> Path:
    """The transcript file of a session: ``<dir>/<sessionId>.jsonl``.

    Raises:
        ValueError: ``session_id`` is not a plain file name (letters, digits, ``.``, ``_``,
            ``-``; first a letter or digit; at most 128 characters). Ids come from clients
            (``cadenza.loadSession``), so ``../x`` must never name a file outside the folder.
    """
    if not _SESSION_ID.fullmatch(session_id):
        raise ValueError(f"invalid session id {session_id!r}")
    return transcript_dir(directory) / f"{session_id}{SUFFIX}"


def read_transcript(path: Path) -> list[TranscriptRecord]:
    """All records of a transcript, in file order.

    Lines are split on line feeds only (message text may hold U+2028 and other line separators,
    which JSON leaves raw). Blank lines are ignored. A last line that is not a valid record (a
    crash mid-write) is skipped with a warning.

    Raises:
        OSError: The file cannot be read (e.g. ``FileNotFoundError``).
        TranscriptError: A line before the last is not a valid record.
    """
    lines = [(n, line) for n, line in enumerate(path.read_bytes().split(b"\n"), 1) if line.strip()]
    records: list[TranscriptRecord] = []
    for i, (lineno, line) in enumerate(lines):
        try:
            records.append(decode_record(line))
        except ValidationError as exc:
            if i == len(lines) - 1:
                log.warning("%s:%d: skipping a partial last record", path, lineno)
                break
            raise TranscriptError(f"{path}:{lineno}: not a transcript record: {exc}") from exc
    return records


def history_from_records(records: Iterable[TranscriptRecord]) -> list[Message]:
    """The conversation recorded in a transcript, in order (not yet sanitized for replay)."""
    return [r.message for r in records if isinstance(r, MessageRecord)]
