"""One checkpointed edit delivery, wrapped around a face's raw "apply this edit".

Every face applies an edit its own way (``workspace/applyEdit``, ``fs/write_text_file``, an
atomic disk write); what surrounds the delivery is the same for all, and lives here once:

1. before the session's first change to a file, its state as the editor sees it goes into the
   session's checkpoint (so ``cadenza undo`` can put it back);
2. before the edit is sent, the state it will leave each file in is recorded as *pending*:
   when the server dies while the editor applies it, undo finds the file in that state and
   counts the change as applied (``undo_plan``);
3. once the outcome is known, an applied edit's states are recorded as ``after``; a refused
   one's records are dropped (files no change was ever applied to leave the checkpoint).

A checkpoint that cannot be written before the change refuses the edit (nothing was sent);
one that cannot be updated afterwards is a warning (the edit stays applied).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from cadenza.host.checkpoints import ABSENT, CheckpointError, FileState, SessionCheckpoint
from cadenza.tools.host import EditOutcome, FileEdit

StateOf = Callable[[Path], FileState]
"""A file's state as the editor sees it now (an open buffer's text, else the disk)."""


def after_states(checkpoint: SessionCheckpoint, edit: FileEdit) -> list[tuple[Path, FileState]]:
    """The state each file touched by ``edit`` is in once applied (a rename keeps its origin)."""
    if edit.kind == "rename":
        assert edit.new_path is not None  # FileEdit.__post_init__
        origin = checkpoint.origin_of(edit.path)
        return [
            (edit.path, ABSENT),
            (edit.new_path, FileState(exists=True, text=edit.new_text, origin=origin)),
        ]
    if edit.kind == "delete":
        return [(edit.path, ABSENT)]
    return [(edit.path, FileState(exists=True, text=edit.new_text))]


def record_after(checkpoint: SessionCheckpoint, edit: FileEdit) -> None:
    """Record what an applied ``edit`` left its files in.

    Raises:
        CheckpointError: The checkpoint cannot be written.
    """
    for path, state in after_states(checkpoint, edit):
        checkpoint.record_after(path, state)


def _record_before(checkpoint: SessionCheckpoint, edit: FileEdit, state_of: StateOf) -> None:
    """The files' states before the change, then where the change will leave them (pending).

    Raises:
        CheckpointError: The checkpoint cannot be written (then nothing may be sent).
    """
    for path in touched(edit):
        checkpoint.record_before(path, partial(state_of, path))
    for path, state in after_states(checkpoint, edit):
        checkpoint.record_pending(path, state)


def touched(edit: FileEdit) -> list[Path]:
    """The files ``edit`` changes (a rename: both names)."""
    return [edit.path] if edit.new_path is None else [edit.path, edit.new_path]


async def deliver_checkpointed(
    checkpoint: SessionCheckpoint | None,
    edit: FileEdit,
    *,
    state_of: StateOf,
    deliver: Callable[[], Awaitable[EditOutcome]],
    warn: Callable[[str], None],
) -> EditOutcome:
    """Deliver ``edit`` with the face's ``deliver``, recorded in ``checkpoint`` around it.

    Args:
        checkpoint: The session's checkpoint; None records nothing (no undo).
        edit: The change.
        state_of: Reads a file's state as the editor sees it (recorded before the change).
        deliver: The face's raw delivery of ``edit``.
        warn: Told when the checkpoint could not be updated after the delivery.

    Returns:
        The delivery's outcome, or a refusal when the checkpoint cannot be written first.
    """
    if checkpoint is None:
        return await deliver()
    try:
        _record_before(checkpoint, edit, state_of)
    except CheckpointError as exc:
        return EditOutcome(
            applied=False, reason=f"{exc}; nothing was changed", refused_by="cadenza"
        )
    outcome = await deliver()
    try:
        if outcome.applied:
            record_after(checkpoint, edit)
        else:
            checkpoint.forget_unapplied(touched(edit))
    except CheckpointError as exc:
        warn(f"the checkpoint could not be updated: {exc}")
    return outcome
