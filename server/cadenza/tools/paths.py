"""Resolving model-given paths strictly inside the workspace root.

The rule (``cadenza.workspace_files.resolve_inside``, which Cadenza's own reads use too): the
fully resolved path (symlinks followed, ``..`` collapsed) must lie under the resolved root. A
symlink inside the workspace that points outside it is refused, and so is a link loop.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from cadenza.tools.base import ToolError
from cadenza.tools.protected import normalized
from cadenza.workspace_files import LinkLoopError, WorkspaceFileError, resolve_inside


def resolve_in_workspace(root: Path, user_path: str) -> Path:
    """Resolve ``user_path`` (relative to ``root``, or absolute) to a path inside ``root``.

    Args:
        root: The workspace root.
        user_path: The path the model gave.

    Returns:
        The absolute resolved path.

    Raises:
        ToolError: The path contains NUL, runs through a symbolic link loop, or leads
            outside the workspace.
    """
    if "\x00" in user_path:
        raise ToolError("invalid path: it must not contain NUL characters")
    user_path = user_path or "."  # an empty path means the workspace root
    if user_path == "~" or user_path.startswith(("~/", "~\\")):
        # Never expanded: a folder named "~" in the workspace is a trap for `rm -rf ~...`.
        raise ToolError(
            f"path {user_path!r} starts with '~', which is not expanded; "
            "use a path relative to the workspace root"
        )
    try:
        return resolve_inside(root, user_path)
    except LinkLoopError:
        raise ToolError(f"path {user_path!r} leads through a symbolic link loop") from None
    except WorkspaceFileError:
        raise ToolError(
            f"path {user_path!r} is outside the workspace; "
            "use a path relative to the workspace root"
        ) from None


def leads_outside(root: Path, relative: str) -> bool:
    """Whether ``root/relative`` now resolves outside the root (a symbolic link on the way).

    Undo and review check it before reading or writing a recorded file: a link put there
    since must not make them read or write a file outside the workspace.
    """
    try:
        resolve_in_workspace(root, relative)
    except ToolError:
        return True
    return False


PROTECTED_PARTS = frozenset({".git", ".hg", ".svn"})
"""Folders no tool changes: a write into ``.git`` (hooks, config) can run code later."""


def resolve_for_change(root: Path, user_path: str, *, link_itself: bool = False) -> Path:
    """Resolve a path a file-changing tool will write, delete or rename.

    Args:
        root: The workspace root.
        user_path: The path the model gave.
        link_itself: The change acts on the directory entry (delete, rename): a symbolic link
            there is refused, since following it would change the file it points to instead.

    Returns:
        The absolute resolved path, inside the workspace.

    Raises:
        ToolError: Outside the workspace, inside a version-control folder, a new name with a
            control character, or (with ``link_itself``) a symbolic link.
    """
    resolved = resolve_in_workspace(root, user_path)
    parts = resolved.relative_to(root.resolve()).parts
    if PROTECTED_PARTS.intersection(normalized(part) for part in parts):  # .GIT is .git too
        raise ToolError(f"{user_path!r} is inside a version-control folder; tools do not change it")
    if _creates_control_name(root.resolve(), resolved):
        raise ToolError(
            f"{user_path!r}: file names with control characters are not created; "
            "choose a name without them"
        )
    if link_itself:
        given = Path(user_path) if Path(user_path).is_absolute() else root / user_path
        if given.is_symlink():
            raise ToolError(
                f"{user_path!r} is a symbolic link; it was not changed (name the file it points "
                f"to, {relative_name(root, resolved)}, to change that file)"
            )
    return resolved


BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Unicode's marks that change the order text is shown in (a name can read backwards)."""


def _creates_control_name(root: Path, resolved: Path) -> bool:
    """Whether writing ``resolved`` would create a name with a control character.

    Control characters: C0, DEL and C1 (``unicodedata`` category Cc), and the marks that
    reorder text (``BIDI_CONTROLS``). Such a name (an escape sequence, a line break, a name
    shown backwards) forges what terminals and listings show. Only the names not on disk yet
    count: an existing file with one is read and edited.
    """
    path = resolved
    while path != root and not os.path.lexists(path):
        if any(unicodedata.category(c) == "Cc" or c in BIDI_CONTROLS for c in path.name):
            return True
        path = path.parent
    return False


def listed_name(name: str) -> str:
    """A file name as a listing shows it, on one line.

    A line break or a terminal escape in it is escaped: it cannot forge the listing's others.
    """
    return name if name.isprintable() else name.encode("unicode_escape").decode("ascii")


def relative_name(root: Path, path: Path) -> str:
    """``path`` relative to the root, with forward slashes, for messages to the model."""
    try:
        return path.relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return path.as_posix()
