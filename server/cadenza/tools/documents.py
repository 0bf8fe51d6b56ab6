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
