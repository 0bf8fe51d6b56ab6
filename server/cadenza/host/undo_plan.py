"""The plan that undoes a session's changes, from its checkpoint (``host.checkpoints``).

``plan_undo`` compares each file's state now with the state the session left: a file the
person changed since is refused by name (no silent clobber), one already back as it was is
left alone, and the rest get one step each. A change recorded as pending (the server stopped
while the editor applied it) counts as applied when the file shows it. Applying the steps is
the editor face's job (``FilesPort``: ``workspace/applyEdit``, or the disk for clients
without it).

``undo_session`` is the whole undo of a session that is over: a live one is refused, its
checkpoint says which files it changed (the session may be from an earlier run of the server),
and the comparison and the writes hold the workspace's lock shared (``host.workspace_lock``):
no session's command runs meanwhile, and the undo is never counted as a command's change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from cadenza.host.checkpoints import (
    CheckpointEntry,
    CheckpointError,
    FileState,
    SessionCheckpoint,
)
from cadenza.host.errors import Unavailable
from cadenza.host.live import LiveSessions
from cadenza.host.workspace_lock import WorkspaceBusy, WorkspaceLock
from cadenza.schema.commands import UndoneFile, UndoSessionResult
from cadenza.tools.paths import leads_outside

UndoAction = Literal["restore", "remove", "recreate", "move_back", "unchanged"]

ENDING_GRACE_S = 1.0
"""Seconds an undo (or a restore) waits for a session that is finishing (its end is out)."""


@dataclass(frozen=True, kw_only=True)
class UndoStep:
    """What undo does to one file.

    Attributes:
        action: ``restore`` the text it had; ``remove`` a file the session created;
            ``recreate`` a file the session deleted; ``move_back`` a file the session renamed
            (then restore its text if it changed); ``unchanged``: already as before.
        path: The file as it will be after undo (workspace-relative).
        current_path: Where the file is now (``move_back``: the new name), else ``path``.
        current: The file's state now (its text, or absent).
        target: The state to restore (``before``): text and, when known, exact bytes.
    """

    action: UndoAction
    path: str
    current_path: str
    current: FileState
    target: FileState


_DONE = {
    "restore": "restored",
    "remove": "removed",
    "recreate": "recreated",
    "move_back": "moved_back",
}


def undone_files(steps: list[UndoStep]) -> list[UndoneFile]:
    """The files ``steps`` put back, as results list them (``unchanged`` ones left out)."""
    return [
        UndoneFile(
            path=step.path,
            action=_DONE[step.action],  # type: ignore[arg-type]
            old_path=step.current_path if step.action == "move_back" else None,
        )
        for step in steps
        if step.action != "unchanged"
    ]


class UndoRefused(Exception):
    """Undo would overwrite changes made since the session's; ``files`` says which and why."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        listed = "; ".join(f"{path} {why}" for path, why in problems)
        super().__init__(f"{listed}. Nothing was undone")


def _same(state: FileState, expected: FileState) -> bool:
    if state.exists != expected.exists:
        return False
    return not state.exists or state.text == expected.text


def _pair_renames(
    entries: dict[str, CheckpointEntry], current: Callable[[str], FileState]
) -> tuple[list[UndoStep], set[str]]:
    """``move_back`` steps for files the session renamed, when both ends are as it left them."""
    steps: list[UndoStep] = []
    done: set[str] = set()
    for entry in entries.values():
        after = entry.after
        if after is None or entry.before.exists or not after.exists or after.origin is None:
            continue
        source = entries.get(after.origin)
        if source is None or not source.before.exists or source.after is None:
            continue
        if source.after.exists or source.path in done:
            continue
        now, source_now = current(entry.path), current(source.path)
        if source_now.exists or not _same(now, after):
            continue
        steps.append(
            UndoStep(
                action="move_back",
                path=source.path,
                current_path=entry.path,
                current=now,
                target=source.before,
            )
        )
        done.update((entry.path, source.path))
    return steps, done


def _step(entry: CheckpointEntry, now: FileState) -> UndoStep | str:
    """The step for one file, or why undo must not touch it."""
    before, after = entry.before, entry.after
    assert after is not None

    def step(action: UndoAction) -> UndoStep:
        return UndoStep(
            action=action, path=entry.path, current_path=entry.path, current=now, target=before
        )

    if _same(now, before):
        return step("unchanged")
    if not _same(now, after):
        if not now.exists:
            return "was deleted after the session's last change to it"
        if not after.exists:
            return "was created again after the session deleted it"
        return "changed after the session's last change to it"
    if not before.exists:
        return step("remove")
    if not after.exists:
        return step("recreate")
    return step("restore")


def _settle(entry: CheckpointEntry, current: Callable[[str], FileState]) -> CheckpointEntry:
    """``entry`` with its pending change counted as applied when the file shows it.

    A change is pending when the server stopped while the editor applied it.
    """
    if entry.pending is not None and _same(current(entry.path), entry.pending):
        return replace(entry, after=entry.pending, pending=None)
    return entry


def plan_undo(checkpoint: SessionCheckpoint, current: Callable[[str], FileState]) -> list[UndoStep]:
    """The steps that put every file the session changed back as it was before the session.

    Args:
        checkpoint: The session's checkpoint.
        current: The state of a workspace-relative path now, as the editor sees it (an open
            buffer's text, else the disk).

    Returns:
        One step per changed file (``unchanged`` ones included), renames first.

    Raises:
        UndoRefused: A file changed since the session's last change to it (its name and why);
            then nothing may be undone.
    """
    steps, problems = plan_steps(checkpoint, checkpoint.entries, current)
    if problems:
        raise UndoRefused(problems)
    return steps


def plan_steps(
    checkpoint: SessionCheckpoint,
    entries: dict[str, CheckpointEntry],
    current: Callable[[str], FileState],
) -> tuple[list[UndoStep], list[tuple[str, str]]]:
    """The steps that put each of ``entries`` back to its ``before``, and the files refused.

    Shared by undo (every file to its state before the session) and the restore of a turn
    (``host.turn_restore``: each file to its state before that turn).

    Returns:
        One step per file that may be put back (``unchanged`` ones included), renames first;
        then ``(path, why)`` of each file changed since the session's last change to it.
    """
    # A path that now leads outside (a link put there since) is neither read nor written.
    outside = [
        (path, "now leads outside the workspace (a symbolic link)")
        for path in entries
        if leads_outside(checkpoint.root, path)
    ]
    entries = {
        key: _settle(entry, current) for key, entry in entries.items() if key not in dict(outside)
    }
    steps, paired = _pair_renames(entries, current)
    problems: list[tuple[str, str]] = list(outside)
    for entry in entries.values():
        if entry.path in paired or entry.after is None:
            continue
        result = _step(entry, current(entry.path))
        if isinstance(result, str):
            problems.append((entry.path, result))
        else:
            steps.append(result)
    return steps, problems


class FilesPort(Protocol):
    """How a face reads and puts back a session's files (undo's way, in its protocol)."""

    def current(self, relative: str) -> FileState:
        """A workspace-relative file's state now, as the editor sees it."""
        ...

    async def put_back(self, steps: list[UndoStep]) -> None:
        """Do the steps; raise (the face's error) when it cannot: then nothing changed."""
        ...


async def wait_ending(live: LiveSessions[Any], session_id: str) -> None:
    """Give a session whose run just ended a moment to let go (its end may be out already)."""
    running = live.get(session_id)
    if running is not None and running.task is not None and not running.waiting:
        await asyncio.wait({running.task}, timeout=ENDING_GRACE_S)


async def undo_session(
    live: LiveSessions[Any],
    session_id: str,
    files: Callable[[SessionCheckpoint], FilesPort],
    base: Path | None = None,
) -> UndoSessionResult:
    """Undo the changes of a session that is over, through the face's ``files``.

    Args:
        live: The live sessions (a running or waiting one is refused).
        session_id: The session (live here, or stored).
        files: The face's files port for the session's checkpoint.
        base: Where checkpoints live (None: ``<user state dir>/checkpoints``).

    Raises:
        Unavailable: The session is still live, unknown (no checkpoint), undone already, or
            a file changed since its last change (the message names the file and why); or
            the checkpoint could not record the undo. Nothing was undone, except in the last
            case.
        Exception: The face's error when it could not put the files back (nothing was undone).
    """
    await wait_ending(live, session_id)
    if (running := live.get(session_id)) is not None:
        raise Unavailable(
            f"session {session_id} is still {running.state}; cancel it "
            "(cadenza.cancelSession) before undoing it"
        )
    try:
        checkpoint = SessionCheckpoint.load(session_id, base)
    except CheckpointError as exc:
        raise Unavailable(str(exc)) from None
    if checkpoint is None:
        if session_id in live.ended:  # it changed no file
            return UndoSessionResult(session_id=session_id, files=[], unchanged=[])
        raise Unavailable(
            f"Cadenza has no record of session {session_id}: it changed no file, or its "
            "checkpoint was removed"
        )
    try:  # no other session's command runs while the files are compared and put back
        async with WorkspaceLock(checkpoint.root, session_id=session_id).editing():
            return await _undo(checkpoint, files(checkpoint))
    except WorkspaceBusy as exc:
        raise Unavailable(f"cannot undo session {session_id} now: {exc}") from None


async def _undo(checkpoint: SessionCheckpoint, port: FilesPort) -> UndoSessionResult:
    name = checkpoint.session_id
    if checkpoint.undone:
        raise Unavailable(f"session {name} was undone already")
    try:
        steps = plan_undo(checkpoint, port.current)
    except UndoRefused as exc:
        raise Unavailable(f"cannot undo session {name}: {exc}") from None
    await port.put_back(steps)
    try:
        checkpoint.mark_undone()
    except CheckpointError as exc:
        raise Unavailable(f"session {name} was undone, but {exc}") from None
    return UndoSessionResult(
        session_id=name,
        files=undone_files(steps),
        unchanged=[step.path for step in steps if step.action == "unchanged"],
    )
