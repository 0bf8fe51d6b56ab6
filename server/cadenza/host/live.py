"""Sessions alive in this process: each one's task, state and waits, and the table of them.

A live session runs as one asyncio task (``driver.drive``) from its start (or revival) until
its turn ends, for every face; failures of the task are logged in a done-callback, so a face
answers the command that started it at once. While it waits for the person within the task
(``driver.PersonPort.asks``) it keeps its state (and its browser sessions) until it resumes,
is cancelled, or the process stops; in the last case its transcript still ends with the
waiting ``session_end``, so it can go on after a restart. The process that runs a session
holds its lock (``host.lock``) until the task ends; between turns the session lives in its
transcript only, and its next turn revives it (``host.service`` ``prompt``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from cadenza.engine.session import Session
from cadenza.engine.session_list import SessionState
from cadenza.host.checkpoints import SessionCheckpoint
from cadenza.host.lock import SessionLock
from cadenza.host.transcripts import GuardedRecorder
from cadenza.schema.outcome import SessionOutcome

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 5.0
"""Seconds to wait for cancelled sessions to finish on shutdown."""

Reply = str | None
"""What resumes a waiting session: the person's text; None means "cancel the session"."""

F = TypeVar("F")


@dataclass(kw_only=True)
class LiveSession(Generic[F]):
    """A session running or waiting in this process.

    Attributes:
        session: The engine session.
        face: What the face keeps for it (e.g. its update publisher).
        recorder: Its transcript (None: none could be opened).
        checkpoint: Its checkpoint, also its editor's (None: it runs without undo).
        root: Its workspace root.
        model: ``PROVIDER/MODEL``.
        started: When it started (UTC).
        state: ``running``, or the waiting stop reason while it waits.
        outcome: How its latest run ended (None while the first run runs).
        task: The asyncio task that drives it.
        cancel_requested: Set by a cancel command (not by a shutdown).
        lock: Held while the session lives here (no other process runs it meanwhile).
        warn: Tells the person of a problem that does not stop the session (the face's
            session log; the server log by default).
    """

    session: Session
    face: F
    recorder: GuardedRecorder | None
    root: Path
    model: str
    checkpoint: SessionCheckpoint | None = None
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    state: SessionState = "running"
    outcome: SessionOutcome | None = None
    task: asyncio.Task[SessionOutcome] | None = None
    cancel_requested: bool = False
    lock: SessionLock | None = None
    warn: Callable[[str], None] = log.warning
    _reply: asyncio.Future[Reply] | None = None

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.session.session_id

    def said(self, words: str | None) -> None:
        """The person's own words of the turn it starts next (restoring a turn gives them back).

        None: nothing to note (the turn's message is the person's words).
        """
        if self.recorder is not None and words is not None:
            self.recorder.said(words)

    @property
    def waiting(self) -> bool:
        """True while it waits for the person."""
        return self._reply is not None and not self._reply.done()

    def expect_reply(self) -> asyncio.Future[Reply]:
        """Start waiting for the person: the future ``give_reply`` completes."""
        self._reply = asyncio.get_running_loop().create_future()
        return self._reply

    def stop_expecting(self) -> None:
        """The wait is over (answered, or the session is cancelled)."""
        self._reply = None

    def give_reply(self, reply: Reply) -> bool:
        """Resume a waiting session with ``reply``; False when it is not waiting."""
        if self._reply is None or self._reply.done():
            return False
        self._reply.set_result(reply)
        return True

    def cancel(self) -> bool:
        """Cancel the session (a cancel command); False when it is over."""
        if self.task is None or self.task.done():
            return False
        self.cancel_requested = True
        self.task.cancel()
        return True


class LiveSessions(Generic[F]):
    """The live sessions of this process by id, and those that ended here."""

    def __init__(self) -> None:
        self.by_id: dict[str, LiveSession[F]] = {}
        self.ended: set[str] = set()
        """Sessions that ran and ended in this process (undo reads their checkpoints)."""

    def get(self, session_id: str) -> LiveSession[F] | None:
        """The live session ``session_id``, if any."""
        return self.by_id.get(session_id)

    def launch(self, live: LiveSession[F], drive: Coroutine[Any, Any, SessionOutcome]) -> None:
        """Run ``drive`` as the session's task; forget the session when it is over."""
        session_id = live.session_id
        task = asyncio.create_task(drive, name=f"cadenza-session-{session_id}")
        live.task = task
        self.by_id[session_id] = live
        task.add_done_callback(lambda done: self._finished(session_id, done))

    async def settled(self, session_id: str, timeout: float) -> LiveSession[F] | None:
        """The live session ``session_id``; None once a run that just ended let it go.

        A session whose run ended is live until its task closed its resources: this waits
        (at most ``timeout`` seconds) for that, so a next turn can revive it.
        """
        live = self.by_id.get(session_id)
        if live is None or live.task is None or live.state == "running" or live.waiting:
            return live
        await asyncio.wait([live.task], timeout=timeout)
        await asyncio.sleep(0)  # the done-callback forgets it
        return self.by_id.get(session_id)

    def cancel(self, session_id: str) -> bool:
        """Cancel a running or waiting session; False when no such session is live."""
        live = self.by_id.get(session_id)
        return live is not None and live.cancel()

    def _finished(self, session_id: str, task: asyncio.Task[SessionOutcome]) -> None:
        """Done-callback: forget the session and log how it ended.

        A done-callback rather than a ``finally`` in the task: it also runs for a task
        cancelled before its first step (e.g. on shutdown).
        """
        live = self.by_id.pop(session_id, None)
        if live is not None:
            if live.recorder is not None:
                live.recorder.close()
            if live.lock is not None:
                live.lock.release()
        self.ended.add(session_id)
        if task.cancelled():
            log.info("session %s cancelled", session_id)
        elif (exc := task.exception()) is not None:
            log.error("session %s failed", session_id, exc_info=exc)
        else:
            log.info("session %s ended: %s", session_id, task.result().stop_reason)

    async def aclose(self) -> None:
        """Cancel every session and wait briefly for them."""
        tasks = [live.task for live in self.by_id.values() if live.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
