"""The workspace's one path rule, and the reader of files Cadenza opens on its own.

The rule, for the tools and for Cadenza's own reads alike: a path is taken relative to the
workspace root, symbolic links on the way are followed and ``..`` collapsed, and the result must
lie under the resolved root. A link inside the workspace that points outside it is refused, and
so is a link loop.

Cadenza opens some workspace files by itself, without the model asking: ``cadenza.toml``,
``.cadenza/commands/*.md``, ``.cadenza/workflows/*.toml``, rule files, the files that say how
the tests run. :func:`read_workspace_file` reads them under that rule, opens only a regular file
(a FIFO, socket or device could block the reader for ever), never follows a link swapped in
after the check, and reads at most ``max_bytes``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
"""Opening never waits for a FIFO's writer, nor follows a link that replaced the checked file."""


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
        fd = os.open(resolved, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WorkspaceFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise WorkspaceFileError(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            raise WorkspaceFileError(f"{path} is larger than {max_bytes} bytes")
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise WorkspaceFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:  # it grew while being read
        raise WorkspaceFileError(f"{path} is larger than {max_bytes} bytes")
    return data


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
