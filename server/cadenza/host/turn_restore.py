"""Restoring a session to before one of the person's turns: its files, then its transcript.

A turn starts with a message the person wrote (the task, an answer, a follow-up), numbered
from 1 in the transcript (``TurnRecord``). Restoring turn N:

1. puts back every file that turn N and the later ones changed, to its state before the
   earliest of those turns that changed it (the checkpoint's ``turn_starts``), with undo's own
   plan (``undo_plan.plan_steps``): a file the person changed since the session's last change
   to it is left alone and named, the others are put back by the face (``workspace/applyEdit``,
   ``fs/write_text_file`` or the disk), under the workspace's lock as undo is;
2. records that in the checkpoint (those turns' changes are no longer the session's);
3. cuts the transcript just before the turn's message, so the conversation the model sees on
   the next turn is the one before it;
4. gives back the turn's words (the person's own, without an expanded ``/command`` or the
   editor's context), for the editor to put back in its input.

The session must not be running (``restore_session_turn`` refuses it; one that waits for the
person is cancelled first, the restore ends that wait). When the face cannot put the files
back, nothing else changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cadenza.engine.events import SessionResumed
from cadenza.engine.transcript import (
    EventRecord,
    MessageRecord,
    TranscriptRecord,
    TurnRecord,
    transcript_path,
)
from cadenza.engine.transcript_writer import rewrite_transcript
from cadenza.host import stored
from cadenza.host.checkpoints import CheckpointEntry, CheckpointError, FileState, SessionCheckpoint
from cadenza.host.driver import RESOURCE_CLOSE_S
from cadenza.host.errors import Unavailable
from cadenza.host.live import LiveSessions
from cadenza.host.lock import SessionLock, SessionLocked
from cadenza.host.undo_plan import FilesPort, UndoStep, plan_steps, undone_files, wait_ending
from cadenza.host.workspace_lock import WorkspaceBusy, WorkspaceLock
from cadenza.messages import from_person
from cadenza.schema.commands import RestoreTurnResult, SkippedFile


class RestoreRefused(Exception):
    """The turn cannot be restored; the message says why (nothing was changed)."""


@dataclass(frozen=True, kw_only=True)
class TurnCut:
    """Where a turn starts in a transcript.

    Attributes:
        session_id: The session.
        turn: The turn (1-based).
        text: The person's own words that started it.
        keep: The records before it (the transcript after the restore).
    """

    session_id: str
    turn: int
    text: str
    keep: list[TranscriptRecord]


@dataclass(frozen=True, kw_only=True)
class TurnRestored:
    """What a restore did.

    Attributes:
        cut: The turn restored, its words and the transcript kept.
        steps: Undo's steps for the files put back (``unchanged`` ones included).
        skipped: ``(path, why)`` of each file left alone (the person changed it since).
    """

    cut: TurnCut
    steps: list[UndoStep]
    skipped: list[tuple[str, str]]

    def result(self) -> RestoreTurnResult:
        """The restore as ``cadenza.restoreTurn`` (and ``_cadenza/restoreTurn``) answer it."""
        return RestoreTurnResult(
            session_id=self.cut.session_id,
            turn=self.cut.turn,
            text=self.cut.text,
            files=undone_files(self.steps),
            unchanged=[step.path for step in self.steps if step.action == "unchanged"],
            skipped=[SkippedFile(path=path, reason=why) for path, why in self.skipped],
        )


def find_turn(session_id: str, records: Sequence[TranscriptRecord], turn: int) -> TurnCut:
    """The start of the person's ``turn`` in a session's transcript.

    Raises:
        RestoreRefused: The session has no such turn.
    """
    starts = [
        i
        for i, record in enumerate(records)
        if isinstance(record, MessageRecord) and from_person(record.message)
    ]
    if not 1 <= turn <= len(starts):
        raise RestoreRefused(
            f"session {session_id} has no turn {turn}: its turns are 1 to {len(starts)}"
        )
    index = starts[turn - 1]
    message = records[index]
    assert isinstance(message, MessageRecord)
    text = message.message.content
    # The records that open the turn go with it: its words, and the resume of the session.
    while index > 0:
        before = records[index - 1]
        if isinstance(before, TurnRecord):
            text = before.text
        elif not (isinstance(before, EventRecord) and isinstance(before.event, SessionResumed)):
            break
        index -= 1
    return TurnCut(session_id=session_id, turn=turn, text=text, keep=list(records[:index]))


def _start_from(entry: CheckpointEntry, turn: int) -> FileState | None:
    """The file's state before the earliest of turns ``turn``.. that changed it; None: none did."""
    later = [number for number in entry.turn_starts if number >= turn]
    return entry.turn_starts[min(later)] if later else None


def restore_entries(checkpoint: SessionCheckpoint, turn: int) -> dict[str, CheckpointEntry]:
    """Each file that ``turn`` or a later turn changed, ``before`` being its state then."""
    entries: dict[str, CheckpointEntry] = {}
    for key, entry in checkpoint.entries.items():
        start = _start_from(entry, turn)
        if start is not None:
            entries[key] = replace(entry, before=start)
    return entries


def settle_restore(checkpoint: SessionCheckpoint, turn: int, skipped: set[str]) -> None:
    """Record in ``checkpoint`` that the files of turns ``turn``.. were put back.

    A file put back leaves the checkpoint when no earlier turn changed it (it is as before
    the session), else the state it was put back to is the session's last. A file left alone
    keeps its state; only its record of those turns goes. The latest turn's review is over.

    Raises:
        CheckpointError: The checkpoint cannot be written.
    """
    for key, entry in list(checkpoint.entries.items()):
        start = _start_from(entry, turn)
        entry.turn_before = entry.turn_after = None
        if start is None:
            continue
        entry.turn_starts = {n: state for n, state in entry.turn_starts.items() if n < turn}
        if key in skipped:
            continue
        if not entry.turn_starts:
            del checkpoint.entries[key]
        else:
            entry.after, entry.pending = start, None
    checkpoint.review = {}
    checkpoint.unlisted = []
    checkpoint.person_turn = turn - 1
    checkpoint.save()


async def restore_turn(
    cut: TurnCut,
    checkpoint: SessionCheckpoint | None,
    files: Callable[[SessionCheckpoint], FilesPort],
    transcripts: Path | None = None,
) -> TurnRestored:
    """Restore the session to before ``cut``'s turn (see the module docstring).

    Args:
        cut: The turn (``find_turn``).
        checkpoint: The session's checkpoint (None: it changed no file).
        files: The face's files port for the checkpoint.
        transcripts: The transcripts' folder (default: the user state folder's).

    Raises:
        RestoreRefused: Another session's command holds the workspace, or the checkpoint or
            the transcript cannot be written (the message says which).
    """
    steps: list[UndoStep] = []
    skipped: list[tuple[str, str]] = []
    if checkpoint is not None:
        lock = WorkspaceLock(checkpoint.root, session_id=checkpoint.session_id)
        try:
            async with lock.editing():
                port = files(checkpoint)
                entries = restore_entries(checkpoint, cut.turn)
                steps, skipped = plan_steps(checkpoint, entries, port.current)
                await port.put_back(steps)
                settle_restore(checkpoint, cut.turn, {path for path, _ in skipped})
        except WorkspaceBusy as exc:
            raise RestoreRefused(f"cannot restore the session now: {exc}") from None
        except CheckpointError as exc:
            raise RestoreRefused(f"the files were put back, but {exc}") from None
    try:
        rewrite_transcript(transcript_path(cut.session_id, transcripts), cut.keep)
    except (OSError, ValueError) as exc:
        raise RestoreRefused(
            f"the files were put back, but the conversation was not cut: {exc}"
        ) from None
    return TurnRestored(cut=cut, steps=steps, skipped=skipped)


async def restore_session_turn(
    live: LiveSessions[Any],
    session_id: str,
    turn: int,
    files: Callable[[SessionCheckpoint], FilesPort],
    base: Path | None = None,
) -> RestoreTurnResult:
    """Restore a session of the task-per-session lifecycle to before the person's ``turn``.

    Args:
        live: The live sessions (a running one is refused, a waiting one ended).
        session_id: The session (live or stored).
        turn: The turn (1-based).
        files: The face's files port for the session's checkpoint.
        base: Where checkpoints live (None: ``<user state dir>/checkpoints``).

    Raises:
        Unavailable: The session is running, unknown, held by another server, has no such
            turn, or its files could not be put back (the message says which; nothing was
            restored then).
        Exception: The face's error when it could not put the files back.
    """
    await _stop_waiting(live, session_id)
    try:
        cut = find_turn(session_id, stored.read_records(session_id), turn)
        lock = SessionLock.acquire(session_id)
    except (RestoreRefused, SessionLocked, ValueError) as exc:
        raise Unavailable(str(exc)) from None
    try:
        try:
            checkpoint = SessionCheckpoint.load(cut.session_id, base)
        except CheckpointError as exc:
            raise Unavailable(str(exc)) from None
        try:
            done = await restore_turn(cut, checkpoint, files)
        except RestoreRefused as exc:
            raise Unavailable(f"cannot restore turn {cut.turn}: {exc}") from None
        return done.result()
    finally:
        lock.release()


async def _stop_waiting(live: LiveSessions[Any], session_id: str) -> None:
    """Refuse a running session; end one that waits for the person (cancelled)."""
    await wait_ending(live, session_id)
    running = live.get(session_id)
    if running is None:
        return
    if not running.waiting or running.task is None:
        raise Unavailable(
            f"session {session_id} is running: wait for its turn to end, or cancel it, "
            "before restoring it"
        )
    running.cancel()
    await asyncio.wait({running.task}, timeout=RESOURCE_CLOSE_S + 1)
    await asyncio.sleep(0)  # its done-callback lets the session go
    if live.get(session_id) is not None:
        raise Unavailable(f"session {session_id} did not stop waiting; try again")
