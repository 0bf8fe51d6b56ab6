"""Transcripts: one append-only JSONL file per session, readable after a crash.

Each line is one ``TranscriptRecord`` (a pydantic union tagged by ``type``, camelCase keys), written
whole and flushed before ``append`` returns, so a crash of the process loses at most the line
being written. That line is then the file's last one, truncated: the reader skips it, and a
writer reopening the file cuts it off before appending. ``append`` also fsyncs unless told not
to (``sync=False``); the session's recorder fsyncs once per step (started at its ``step``
event, before the model request, on a background thread so the event loop never waits for the
disk), at checkpoints and at the end, so a crash of the whole machine loses at most the last
step or two (one fsync per record, on the loop, cost ~2 ms a step: docs/performance.md).

Records, in the order a session writes them:

- ``session_start``: ``{sessionId, task, root, workflow, model, time}``;
- ``message``: every message appended to the live conversation (``Message`` union);
- ``event``: every session event (``SessionEvent`` union);
- ``checkpoint``: ``{movement, note}``, the memory note written at the end of a movement;
- ``session_end``: ``{stopReason, message}``.

Files live in ``<user state dir>/sessions/<sessionId>.jsonl``; the state dir comes from
``platformdirs.user_state_dir("cadenza")``, which honours ``XDG_STATE_HOME`` on Linux.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Annotated, BinaryIO, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from cadenza.engine.events import SessionEvent
from cadenza.messages import Message
from cadenza.types import StopReason

log = logging.getLogger(__name__)

SUFFIX = ".jsonl"
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_TAIL_CHUNK = 64 * 1024


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
    SessionStartRecord | MessageRecord | EventRecord | CheckpointRecord | SessionEndRecord,
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


def _last_line_start(f: BinaryIO, size: int) -> int:
    """Offset just after the last line feed of the file (0 when it has none)."""
    end = size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        f.seek(start)
        chunk = f.read(end - start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def _repair_tail(path: Path) -> None:
    """End the file on a whole line: a crash may have left a partial last record.

    A valid record missing only its line feed gets one; anything after the last line feed is cut
    (the reader would skip it anyway, and the next append must not be glued to it).
    """
    try:
        f = path.open("r+b")
    except FileNotFoundError:
        return
    with f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        start = _last_line_start(f, size)
        f.seek(start)
        tail = f.read()
        try:
            decode_record(tail)
        except ValidationError:
            log.warning("%s: cutting a partial last record (%d bytes)", path, len(tail))
            f.truncate(start)
        else:
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
        f.flush()
        os.fsync(f.fileno())


@functools.cache
def _syncer() -> ThreadPoolExecutor:
    """The one thread that runs background fsyncs (``TranscriptWriter.sync(wait=False)``)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="cadenza-fsync")


class TranscriptWriter:
    """Appends records to one transcript file, each flushed (and by default fsync'd) at once.

    Writes are small and synchronous (one ``write`` per record, one ``fsync`` per record or per
    ``sync``); the loop calls ``append`` between model requests, never per streamed token.

    Args:
        path: The file; its folder is created, an existing file is appended to (after cutting a
            partial last record left by a crash).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        _repair_tail(path)
        self._file: BinaryIO | None = path.open("ab")
        self._unsynced = False
        self._pending: Future[None] | None = None

    @classmethod
    def for_session(cls, session_id: str, directory: Path | None = None) -> TranscriptWriter:
        """A writer on ``transcript_path(session_id, directory)``.

        Raises:
            ValueError: The session id is not a plain file name.
        """
        return cls(transcript_path(session_id, directory))

    @property
    def closed(self) -> bool:
        """True after ``close``."""
        return self._file is None

    def append(self, record: TranscriptRecord, *, sync: bool = True) -> None:
        """Write one record as one line, then flush, and fsync unless ``sync`` is False.

        Raises:
            ValueError: The writer is closed.
            OSError: The disk refused the write.
        """
        if self._file is None:
            raise ValueError(f"transcript {self.path} is closed")
        self._file.write(encode_record(record))
        self._file.flush()
        self._unsynced = True
        if sync:
            self.sync()

    def sync(self, *, wait: bool = True) -> None:
        """Fsync what was appended since the last fsync (nothing to do when all is on disk).

        Args:
            wait: False starts the fsync on a background thread and returns at once (the
                event loop never waits for the disk); the next ``sync`` or ``close`` waits for
                it first and raises its error, if any.

        Raises:
            OSError: This fsync, or an earlier background one, failed.
        """
        if self._file is None or not self._unsynced:
            return
        self._settle()
        self._unsynced = False
        if wait:
            os.fsync(self._file.fileno())
        else:
            self._pending = _syncer().submit(os.fsync, self._file.fileno())

    def _settle(self) -> None:
        """Wait for the background fsync, if any; raise its error."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        """Close the file (idempotent), after a last fsync."""
        if self._file is not None:
            try:
                self._settle()
                self.sync()
            finally:
                self._file.close()
                self._file = None

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


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
        path=transcript_path(session_id) if _SESSION_ID.fullmatch(session_id) else Path(),
        root=start.root,
        last_message=(getattr(last, "missing_info", None) or last.message) if last else "",
    )


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
