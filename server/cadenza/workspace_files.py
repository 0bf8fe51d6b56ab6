"""The workspace's one path rule, and the reader of files Cadenza opens on its own.

The rule, for the tools and for Cadenza's own reads alike: a path is taken relative to the
workspace root, symbolic links on the way are followed and ``..`` collapsed, and the result must
lie under the resolved root. A link inside the workspace that points outside it is refused, and
so is a link loop.

Cadenza opens some workspace files by itself, without the model asking: ``cadenza.toml``,
``.cadenza/commands/*.md``, ``.cadenza/workflows/*.toml``, rule files, the files that say how
the tests run. :func:`read_workspace_file` reads them under that rule with Cadenza's one reader
of untrusted files (``fileread.read_regular``): only a regular file is opened (a FIFO, socket or
device could block the reader for ever), a link swapped in after the check is not followed,
and at most ``max_bytes`` are read.
"""

from __future__ import annotations

import os
from pathlib import Path

from cadenza.fileread import FileReadError, read_regular


class WorkspaceFileError(Exception):
    """A workspace path breaks the rule, or a file Cadenza reads on its own was refused.

    The message says why in words for the person (outside the workspace, not a regular file,
    too large, unreadable).
    """


class LinkLoopError(WorkspaceFileError):
    """The path leads through a symbolic link loop."""


def resolve_inside(root: Path, path: str | Path) -> Path:
    """``path`` (relative to ``root``, or absolute) resolved, when it lies inside ``root``.

    Raises:
        WorkspaceFileError: It leads outside the workspace, or through a symbolic link loop.
    """
    real_root = root.resolve()
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = real_root / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (RuntimeError, OSError):  # a link loop (RuntimeError before Python 3.13)
        raise LinkLoopError(f"{path} leads through a symbolic link loop") from None
    except ValueError:  # a NUL character
        raise WorkspaceFileError(f"{path!r} is not a valid path") from None
    if not resolved.is_relative_to(real_root):
        raise WorkspaceFileError(f"{path} leads outside the workspace")
    return resolved


def read_workspace_file(root: Path, path: str | Path, *, max_bytes: int) -> bytes | None:
    """The bytes of a workspace file Cadenza reads on its own (see the module).

    Args:
        root: The workspace root.
        path: The file, relative to ``root`` or absolute.
        max_bytes: The largest file read; a larger one is refused.

    Returns:
        The file's bytes, or None when there is no such file.

    Raises:
        WorkspaceFileError: Outside the workspace (a link on the way), a link loop, not a
            regular file, larger than ``max_bytes``, or unreadable.
    """
    resolved = resolve_inside(root, path)
    try:
        return read_regular(resolved, limit=max_bytes, label=str(path), follow_symlinks=False)
    except FileReadError as exc:
        if not os.path.lexists(resolved):
            return None
        raise WorkspaceFileError(str(exc)) from None


def read_workspace_text(root: Path, path: str | Path, *, max_bytes: int) -> str | None:
    """:func:`read_workspace_file` decoded as UTF-8 (a BOM dropped); None when absent.

    Raises:
        WorkspaceFileError: As :func:`read_workspace_file`, or the bytes are not UTF-8.
    """
    data = read_workspace_file(root, path, max_bytes=max_bytes)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise WorkspaceFileError(f"{path} is not UTF-8 text") from None
