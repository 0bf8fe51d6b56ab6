"""Byte-exact file reading and atomic writing.

Files are read as bytes and decoded deliberately: no universal-newline translation, so CRLF
survives (pygls's ``TextDocument.source`` would turn CRLF into LF, see field case F04).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from cadenza.tools.base import ToolError


def read_text(path: Path) -> str:
    """Read a UTF-8 file exactly (line endings kept, a BOM kept as U+FEFF).

    Raises:
        ToolError: The file is missing, a directory, or not valid UTF-8.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"file not found: {path.name}") from None
    except IsADirectoryError:
        raise ToolError(f"{path.name} is a directory; use list_files") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{path.name} is not valid UTF-8 text (byte {exc.start}); it was not read or changed"
        ) from None


def _new_file_mode() -> int:
    """The mode ``open()`` would give a new file (0o666 less the umask); mkstemp uses 0o600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temp file in the same folder, then rename.

    A reader sees either the old or the new bytes, never a mix; an existing file keeps its
    mode, a new one gets the usual 0o666 less the umask.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _new_file_mode()
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".cadenza-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
