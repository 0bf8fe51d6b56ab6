"""Reading a file as the editor sees it: the unsaved buffer when open, else the disk."""

from __future__ import annotations

from pathlib import Path

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


def exists(host: ToolHost, path: Path) -> bool:
    """Whether the file exists in the editor (an untitled buffer) or on disk."""
    return host.open_document(path) is not None or path.is_file()


def fingerprint(host: ToolHost, path: Path) -> tuple[object, ...]:
    """A cheap token that changes when the file's text may have.

    ``tools.freshness.file_state``: the buffer's version and text hash when the editor has it
    open, else the file's stat fields on disk (with its content hash while its timestamps are
    too recent to prove anything).
    """
    return (file_state(host, path),)
