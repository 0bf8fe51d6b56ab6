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

Some editors cannot create, rename or delete files (an LSP client without
``resourceOperations``: eglot 1.9, Vim's LSP plugins). Refusing the tool would leave the agent
unable to ever add a file there, so the face does the operation on disk instead
(``resource_on_disk``): atomically (``tools.fs.apply_on_disk``: ``write_atomic``, a rename that
never overwrites), inside the workspace rules again (``tools.paths.resolve_for_change``:
nothing outside the root or in a version-control folder, no symbolic link followed), and says
so in the outcome's note, which the tool result and so the session's updates carry. Editors
pick new files up from disk; a renamed or deleted file that is open keeps its (saved) buffer,
which the note tells the person to close.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from cadenza.host.checkpoints import ABSENT, CheckpointError, FileState, SessionCheckpoint
from cadenza.tools.base import ToolError
from cadenza.tools.fs import apply_on_disk
from cadenza.tools.host import EditOutcome, FileEdit
from cadenza.tools.paths import relative_name, resolve_for_change

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


_DONE = {"create": "created", "rename": "renamed", "delete": "deleted"}


def _inside(root: Path, path: Path, *, link_itself: bool) -> str | None:
    """Why ``path`` may not be changed under ``root``, or None."""
    try:
        resolve_for_change(root, str(path), link_itself=link_itself)
    except ToolError as exc:
        return str(exc)
    return None


def resource_on_disk(edit: FileEdit, root: Path, *, why: str, open_in_editor: bool) -> EditOutcome:
    """Create, rename or delete ``edit``'s file on disk, for an editor without the operation.

    Args:
        edit: A ``create``, ``rename`` or ``delete`` edit (its paths resolved by the tool).
        root: The session's workspace root: the paths are checked against it once more.
        why: Why the editor could not, for the note (e.g. what its capabilities lack).
        open_in_editor: The file is open in the editor (a rename or delete leaves a buffer
            without a file, which the note mentions).

    Returns:
        The disk write's outcome; when applied, with a ``note`` saying it was done on disk
        and why, for the tool result.
    """
    for path, link_itself in ((edit.path, edit.kind != "create"), (edit.new_path, False)):
        if path is None:
            continue
        refusal = _inside(root, path, link_itself=link_itself)
        if refusal is not None:
            return EditOutcome(applied=False, reason=refusal, refused_by="cadenza")
    outcome = apply_on_disk(edit)
    if not outcome.applied:
        return outcome
    note = f"{_DONE[edit.kind]} on disk by Cadenza: {why}"
    if open_in_editor and edit.kind != "create":
        note += f"; its buffer of {relative_name(root, edit.path)} is still open, close it"
    return replace(outcome, note=note)
