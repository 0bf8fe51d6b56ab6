"""Creating, renaming and deleting files on disk for editors that cannot do it themselves.

An LSP client that declares no ``workspace.workspaceEdit.resourceOperations`` (eglot 1.9,
Vim's LSP plugins) or takes only the ``changes`` map cannot receive ``CreateFile``,
``RenameFile`` or ``DeleteFile``. Refusing the tool would leave the agent unable to ever add
a file in such an editor, so Cadenza does the operation on disk itself: atomically
(``tools.fs.apply_on_disk``: ``write_atomic``, a rename that never overwrites), inside the
workspace rules again (``tools.paths.resolve_for_change``: nothing outside the root or in a
version-control folder, no symbolic link followed), and says so in the outcome's note, which
the tool result and so the session's ``tool_call_update`` carry. Editors pick new files up
from disk; a renamed or deleted file that is open keeps its (saved) buffer, which the note
tells the person to close.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cadenza.host.ports import EditOutcome, FileEdit, ToolError, apply_on_disk
from cadenza.tools.paths import relative_name, resolve_for_change

_DONE = {"create": "created", "rename": "renamed", "delete": "deleted"}


def _inside(root: Path, path: Path, *, link_itself: bool) -> str | None:
    """Why ``path`` may not be changed under ``root``, or None."""
    try:
        resolve_for_change(root, str(path), link_itself=link_itself)
    except ToolError as exc:
        return str(exc)
    return None


def apply_resource_on_disk(edit: FileEdit, root: Path, *, open_in_editor: bool) -> EditOutcome:
    """Create, rename or delete ``edit``'s file on disk, for a client without the operation.

    Args:
        edit: A ``create``, ``rename`` or ``delete`` edit (its paths resolved by the tool).
        root: The session's workspace root: the paths are checked against it once more.
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
    note = (
        f"{_DONE[edit.kind]} on disk by Cadenza: the editor takes no {edit.kind} operations "
        "in workspace edits (workspace.workspaceEdit.resourceOperations)"
    )
    if open_in_editor and edit.kind != "create":
        note += f"; its buffer of {relative_name(root, edit.path)} is still open, close it"
    return replace(outcome, note=note)
