"""Writing a transcript: one record per line, flushed at once, fsync'd when asked.

A crash of the process loses at most the line being written; a writer reopening the file cuts
such a partial last line off before appending (a valid record missing only its line feed gets
one). ``sync(wait=False)`` fsyncs on one background thread, so the event loop never waits for
the disk (the session's recorder syncs once per step: ``engine.journal``).
"""

from __future__ import annotations

import functools
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from pydantic import ValidationError

from cadenza.engine.transcript import (
    TranscriptRecord,
    decode_record,
    encode_record,
    transcript_path,
)
from cadenza.textio import write_atomic

log = logging.getLogger(__name__)

_TAIL_CHUNK = 64 * 1024


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


def rewrite_transcript(path: Path, records: list[TranscriptRecord]) -> None:
    """Replace the transcript at ``path`` with ``records`` at once (restoring a turn trims it).

    The new file replaces the old in one rename: a crash leaves one or the other, whole. No
    writer may have the file open (its appends would go to the replaced file).

    Raises:
        OSError: The file cannot be written.
    """
    write_atomic(path, b"".join(encode_record(record) for record in records))
