"""One process at a time per session: an advisory lock next to the session's transcript.

Two servers can share one state folder (two editor windows). A waiting session revived by
both would run twice on one transcript, so the process that runs (or revives) a session holds
an exclusive ``flock`` on ``<sessions dir>/<sessionId>.lock`` until the session is over; a
second process is refused. The OS drops the lock when the holder dies, so a killed server never
leaves a session locked. Where ``fcntl`` does not exist (Windows) no lock is taken.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from cadenza.engine.transcript import transcript_path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


class SessionLocked(Exception):
    """Another process holds the session's lock."""


class SessionLock:
    """An exclusive lock on one session, held until ``release``.

    Raises:
        SessionLocked: From ``acquire``, when another process holds it.
    """

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def acquire(cls, session_id: str, directory: Path | None = None) -> SessionLock:
        """Take the lock of ``session_id`` (its transcript's folder, ``.lock`` suffix).

        Raises:
            SessionLocked: Another process holds it.
            ValueError: The session id is not a plain file name.
        """
        path = transcript_path(session_id, directory).with_suffix(".lock")
        if fcntl is None:
            return cls(path, None)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            log.warning("session %s runs without a lock: %s", session_id, exc)
            return cls(path, None)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLocked(
                f"session {session_id} is running or waiting in another Cadenza server"
            ) from None
        return cls(path, fd)

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None
