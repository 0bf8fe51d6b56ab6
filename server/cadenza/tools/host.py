"""What tools need from the editor: the ``ToolHost`` port and the edit model crossing it.

Every file change a tool makes is one ``FileEdit``: a text change, a creation, a deletion or
a rename. The LSP face turns it into one ``WorkspaceEdit`` (LSP 3.17 §WorkspaceEdit) sent with
``workspace/applyEdit``, or, for a client that cannot apply edits, writes it on disk
atomically; test doubles apply it in memory. Tools never know which.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from cadenza.textio import TextFormat
from cadenza.tools.intel import CodeIntel

EditKind = Literal["change", "create", "delete", "rename"]
"""A text change of an existing document, or one of LSP's resource operations
(``CreateFile``, ``DeleteFile``, ``RenameFile``)."""


@dataclass(frozen=True, kw_only=True)
class DocumentSnapshot:
    """A document as the tool read it: the editor's unsaved buffer, or the file on disk.

    Attributes:
        path: Absolute, resolved path inside the workspace. An untitled buffer without a file
            is addressed as ``root / "untitled:Untitled-1"`` (its URI as the name).
        text: The text in code points, line endings as in the buffer or the bytes, no BOM.
        version: The editor's document version (LSP ``VersionedTextDocumentIdentifier``), or
            None for a file read from disk.
        format: How the disk bytes were decoded (encoding, BOM); None for a buffer, whose
            encoding is the editor's business.
    """

    path: Path
    text: str
    version: int | None
    format: TextFormat | None = None


@dataclass(frozen=True, kw_only=True)
class FileEdit:
    """One file change, described by the texts before and after it.

    The editor face sends the smallest ``TextEdit``s that turn ``old_text`` into ``new_text``;
    ``version`` is the buffer version the tool read (None: read from disk), so a buffer that
    changed since makes the editor refuse the edit instead of clobbering it.

    Attributes:
        path: Absolute, resolved path inside the workspace (for a rename: the old path).
        old_text: The text the change applies to; None when the file is created.
        new_text: The text afterwards; for a deletion ``""``, for a rename the unchanged text.
        version: The document version the change was computed on.
        label: A short human name of the change, e.g. ``edit_file src/app.py`` (LSP
            ``ApplyWorkspaceEditParams.label`` and ``ChangeAnnotation.label``).
        kind: What happens to the file.
        new_path: For ``rename``: the absolute, resolved new path.
        description: A longer text for review (``ChangeAnnotation.description``), e.g. what
            the tool call asked for.
        format: For a file read from disk: how its bytes were decoded. The edit is written back
            in that format; None for a buffer or a new file (UTF-8).
    """

    path: Path
    old_text: str | None
    new_text: str
    version: int | None
    label: str
    kind: EditKind = "change"
    new_path: Path | None = None
    description: str = ""
    format: TextFormat | None = None

    def __post_init__(self) -> None:
        if (self.kind == "create") != (self.old_text is None):
            raise ValueError("old_text is None exactly for a created file")
        if (self.kind == "rename") != (self.new_path is not None):
            raise ValueError("new_path is set exactly for a rename")


@dataclass(frozen=True, kw_only=True)
class EditOutcome:
    """Whether an edit was applied; when not, who stopped it and why.

    Attributes:
        applied: The editor (or the disk write) applied the whole edit.
        reason: Why not, in words for the model.
        refused_by: ``person``: the person did not allow it: asked first by Cadenza
            (rejected, dismissed, or unanswered for a protected file), or sent for review
            (a change annotation that needs confirmation) and not applied with no failure to
            explain it; ``editor``: the client answered ``applied: false`` for another reason
            (a stale version, a failed change, a read-only buffer); ``cadenza``: it was
            never sent (the file changed since it was read, the client lacks a capability,
            the checkpoint could not be written).
        note: How an applied edit was done when not the usual way (on disk by Cadenza for an
            editor that cannot create, rename or delete files), for the tool result: the
            model and the person must know the editor did not do it.
    """

    applied: bool
    reason: str | None = None
    refused_by: Literal["editor", "person", "cadenza"] = "editor"
    note: str | None = None


class ToolHost(Protocol):
    """The editor as tools see it."""

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """The editor's buffer for ``path`` when it is open, else None (read the disk).

        Called from worker threads too (a read tool's stamp is probed there, off the event
        loop): it only reads what the face holds in memory and never awaits the loop.
        """
        ...

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Apply an edit through the editor (``workspace/applyEdit``) or atomically on disk."""
        ...

    async def ask_user(self, question: str) -> str | None:
        """Ask the person a question; None when they declined to answer."""
        ...

    def code_intel(self) -> CodeIntel | None:
        """The editor's own language intelligence (its language servers), or None."""
        ...
