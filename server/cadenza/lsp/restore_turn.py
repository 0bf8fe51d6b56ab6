"""``cadenza.restoreTurn``: a session as it was before one of the person's turns.

The host does the restore (``host.turn_restore``: which files, the checkpoint, the cut
transcript); this face puts the files back the way ``cadenza.undoSession`` does, with the
same code (``undo.SessionUndo.put_back``: one ``workspace/applyEdit``, resource operations the
client lacks on disk, the disk for a client without ``applyEdit``). A running session is
refused; one waiting for the person is cancelled first (the restore ends that wait).
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Any

from pygls.lsp.server import LanguageServer

from cadenza.host import stored
from cadenza.host.checkpoints import CheckpointError, SessionCheckpoint
from cadenza.host.driver import RESOURCE_CLOSE_S
from cadenza.host.errors import Unavailable
from cadenza.host.live import LiveSessions
from cadenza.host.lock import SessionLock, SessionLocked
from cadenza.host.turn_restore import RestoreRefused, TurnCut, find_turn, restore_turn
from cadenza.lsp.undo import ENDING_GRACE_S, SessionUndo, UndoFailed
from cadenza.schema.commands import RestoreTurnResult


class RestoreFailed(Exception):
    """The turn was not restored; the message says why."""


async def restore_session_turn(
    server: LanguageServer,
    live: LiveSessions[Any],
    session_id: str,
    turn: int,
    base: Path | None = None,
) -> RestoreTurnResult:
    """Restore ``session_id`` to before the person's ``turn`` (1-based).

    Args:
        server: The language server (its client applies the edit).
        live: The server's live sessions (a running one is refused).
        session_id: The session (live or stored).
        turn: The turn.
        base: Where checkpoints live (None: ``<user state dir>/checkpoints``).

    Raises:
        RestoreFailed: The session is running, unknown, has no such turn, or its files could
            not be put back (the message says which; nothing was restored then).
    """
    await _stop_waiting(live, session_id)
    try:
        cut = find_turn(session_id, stored.read_records(session_id), turn)
        lock = SessionLock.acquire(session_id)
    except (Unavailable, RestoreRefused, SessionLocked, ValueError) as exc:
        raise RestoreFailed(str(exc)) from None
    try:
        return await _restore(server, cut, base)
    finally:
        lock.release()


async def _stop_waiting(live: LiveSessions[Any], session_id: str) -> None:
    """Refuse a running session; end one that waits for the person (cancelled)."""
    running = live.get(session_id)
    if running is not None and running.task is not None and not running.waiting:
        await asyncio.wait({running.task}, timeout=ENDING_GRACE_S)  # its end may be out already
    running = live.get(session_id)
    if running is None:
        return
    if not running.waiting or running.task is None:
        raise RestoreFailed(
            f"session {session_id} is running: wait for its turn to end, or cancel it, "
            "before restoring it"
        )
    running.cancel()
    await asyncio.wait({running.task}, timeout=RESOURCE_CLOSE_S + 1)
    await asyncio.sleep(0)  # its done-callback lets the session go
    if live.get(session_id) is not None:
        raise RestoreFailed(f"session {session_id} did not stop waiting; try again")


async def _restore(server: LanguageServer, cut: TurnCut, base: Path | None) -> RestoreTurnResult:
    try:
        checkpoint = SessionCheckpoint.load(cut.session_id, base)
    except CheckpointError as exc:
        raise RestoreFailed(str(exc)) from None
    try:
        done = await restore_turn(cut, checkpoint, partial(SessionUndo, server))
    except (RestoreRefused, UndoFailed) as exc:
        raise RestoreFailed(f"cannot restore turn {cut.turn}: {exc}") from None
    return done.result()
