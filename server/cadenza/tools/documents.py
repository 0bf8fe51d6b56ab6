"""Reading a file as the editor sees it: the unsaved buffer when open, else the disk."""

from __future__ import annotations

from pathlib import Path

from cadenza.tools.fs import read_text
from cadenza.tools.host import DocumentSnapshot, ToolHost


def current_document(host: ToolHost, path: Path) -> DocumentSnapshot:
    """The editor's buffer for ``path`` if open, else the file on disk (version None).

    Raises:
        ToolError: The file is not open and cannot be read as UTF-8 text.
    """
    snapshot = host.open_document(path)
    if snapshot is not None:
        return snapshot
    return DocumentSnapshot(path=path, text=read_text(path), version=None)


def exists(host: ToolHost, path: Path) -> bool:
    """Whether the file exists in the editor (an untitled buffer) or on disk."""
    return host.open_document(path) is not None or path.is_file()


def fingerprint(host: ToolHost, path: Path) -> tuple[object, ...]:
    """A cheap token that changes when the file's text may have.

    The buffer's version when the editor has it open, else the file's mtime (ns) and size
    (bytes) on disk.
    """
    snapshot = host.open_document(path)
    if snapshot is not None:
        return ("buffer", snapshot.version, len(snapshot.text))
    try:
        stat = path.stat()
    except OSError:
        return ("missing",)
    return ("disk", stat.st_mtime_ns, stat.st_size)
