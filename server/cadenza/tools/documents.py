"""Reading a file as the editor sees it: the unsaved buffer when open, else the disk.

A tool reads with ``read_document``: the buffer is looked up on the event loop, the disk is
read in a worker thread within a deadline (``fileread.in_worker``), so a slow or stuck read
never holds up other requests. ``current_document`` is the same read for code that is not
async; both read only regular files, bounded (``tools.fs.read_decoded``).
"""

from __future__ import annotations

import os
from pathlib import Path

from cadenza.fileread import FileReadError, NotRegularFile, in_worker, regular_stat
from cadenza.tools.base import ToolError
from cadenza.tools.freshness import file_state
from cadenza.tools.fs import read_decoded
from cadenza.tools.host import DocumentSnapshot, ToolHost


def current_document(host: ToolHost, path: Path, name: str | None = None) -> DocumentSnapshot:
    """The editor's buffer for ``path`` if open, else the file on disk (version None).

    Args:
        host: The editor.
        path: The resolved path.
        name: How to call the file in messages (default: its file name).

    Raises:
        ToolError: The file is not open and is missing, or not text that decodes exactly.
    """
    snapshot = host.open_document(path)
    if snapshot is not None:
        return snapshot
    decoded = read_decoded(path, name)
    return DocumentSnapshot(path=path, text=decoded.text, version=None, format=decoded.format)


async def read_document(host: ToolHost, path: Path, name: str | None = None) -> DocumentSnapshot:
    """``current_document``, the disk read off the event loop.

    Raises:
        ToolError: As ``current_document``, or the read took longer than its deadline.
    """
    snapshot = host.open_document(path)
    if snapshot is not None:
        return snapshot
    try:
        decoded = await in_worker(read_decoded, path, name)
    except FileReadError as exc:  # the deadline
        raise ToolError(f"{name or path.name}: {exc}") from None
    return DocumentSnapshot(path=path, text=decoded.text, version=None, format=decoded.format)


def exists(host: ToolHost, path: Path) -> bool:
    """Whether the file exists in the editor (an untitled buffer) or on disk.

    Raises:
        ToolError: Something that is not a regular file is there (a FIFO, a device, a
            symbolic link loop), or it cannot be looked at: no tool writes over it.
    """
    if host.open_document(path) is not None:
        return True
    try:
        regular_stat(path, path.name)
    except NotRegularFile as exc:
        if exc.kind == "directory":
            raise ToolError(f"{path.name} is a folder") from None
        raise ToolError(str(exc).replace("it was not read", "it was not changed")) from None
    except FileReadError as exc:
        if not os.path.lexists(path):
            return False
        raise ToolError(str(exc)) from None
    return True


def fingerprint(host: ToolHost, path: Path) -> tuple[object, ...]:
    """A cheap token that changes when the file's text may have.

    ``tools.freshness.file_state``: the buffer's version and text hash when the editor has it
    open, else the file's stat fields on disk (with its content hash while its timestamps are
    too recent to prove anything).
    """
    return (file_state(host, path),)
