"""What tools need from the editor: the ``ToolHost`` port and the edit types crossing it.

The LSP face, the headless path and test doubles implement ``ToolHost``; tools never know which.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True, kw_only=True)
class DocumentSnapshot:
    """A document as the editor holds it (its unsaved buffer).

    Attributes:
        path: Absolute, resolved path inside the workspace.
        text: The buffer's text (characters, line endings as in the buffer).
        version: The editor's document version (LSP ``VersionedTextDocumentIdentifier``), or None
            for a file read from disk.
    """

    path: Path
    text: str
    version: int | None


@dataclass(frozen=True, kw_only=True)
class FileEdit:
    """One whole-file change, from ``old_text`` to ``new_text``.

    The editor face turns it into a minimal ``WorkspaceEdit``; ``old_text`` is the text the tool
    read (None when the file is created), ``version`` the buffer version it read (None: read from
    disk), so a buffer changed since then makes the editor refuse the edit instead of clobbering.

    Attributes:
        path: Absolute, resolved path inside the workspace.
        old_text: The text the change applies to, or None for a new file.
        new_text: The full text after the change.
        version: The document version the change was computed on.
        label: A short description for the editor (e.g. ``edit_file app.py``).
    """

    path: Path
    old_text: str | None
    new_text: str
    version: int | None
    label: str


@dataclass(frozen=True, kw_only=True)
class EditOutcome:
    """Whether the editor applied an edit; ``reason`` says why not."""

    applied: bool
    reason: str | None = None


class ToolHost(Protocol):
    """The editor as tools see it."""

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """The editor's buffer for ``path`` when it is open, else None (read the disk)."""
        ...

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Apply an edit through the editor (``workspace/applyEdit``) or atomically on disk."""
        ...

    async def ask_user(self, question: str) -> str | None:
        """Ask the person a question; None when they declined to answer."""
        ...
