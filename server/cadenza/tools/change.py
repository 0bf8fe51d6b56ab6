"""The steps every file-changing tool shares: find the file, read it, check the change, deliver it.

A file-changing tool (``edit_file``, ``write_file``, ``create_file``, ``delete_file``,
``rename_file``, ``replace_lines``) only computes a ``FileEdit``; the steps around that are the same
for all of them and live here, so each tool's module holds only what it decides. Nothing here writes
to disk: the edit goes to the editor (``ToolHost.apply_edit``), so a refused or stale edit writes
nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

import anyio

from cadenza.secrets import REDACTED, shown_redacted
from cadenza.textio import UnencodableError, encode_change, encode_text
from cadenza.tools.base import A, Tool, ToolContext, ToolError, ToolKind
from cadenza.tools.fs import read_decoded
from cadenza.tools.host import DocumentSnapshot, EditKind, EditOutcome, FileEdit
from cadenza.tools.paths import relative_name, resolve_for_change
from cadenza.tools.syntax import breaks_syntax

EDIT_TIMEOUT_S = 3600.0
"""Seconds an edit may take: in review mode ``confirm`` a person reads the change first."""


class FileChangeTool(Tool[A]):
    """A tool that changes one file through the editor (kind and timeout of every such tool)."""

    kind: ClassVar[ToolKind] = "edit"
    timeout_s = EDIT_TIMEOUT_S


def target(ctx: ToolContext, raw: str, *, link_itself: bool = False) -> tuple[Path, str]:
    """The resolved path the model named, and how messages call it.

    Args:
        ctx: The running tool's context (its root).
        raw: The path as the model wrote it, relative to the workspace root.
        link_itself: A symbolic link is the target itself, not the file it points to (deleting
            or renaming the link must not touch its target).

    Raises:
        ToolError: The path is outside the workspace (``resolve_for_change``).
    """
    path = resolve_for_change(ctx.root, raw, link_itself=link_itself)
    return path, relative_name(ctx.root, path)


def existing_file(ctx: ToolContext, path: Path, name: str) -> DocumentSnapshot:
    """The text of a file that exists on disk, refusing buffers that differ from it.

    Raises:
        ToolError: No file on disk (an untitled buffer included), a folder or another file
            that is not a regular one, not text, or an open buffer with unsaved changes
            (deleting or moving it would lose them).
    """
    if path.is_dir():
        raise ToolError(f"{name} is a folder; only files can be deleted or renamed")
    buffer = ctx.host.open_document(path)
    if buffer is not None and not os.path.lexists(path):
        raise ToolError(f"{name} is an unsaved editor buffer, not a file on disk")
    on_disk = read_decoded(path, name)  # only a regular file, bounded
    if buffer is not None and buffer.text != on_disk.text:
        raise ToolError(
            f"{name} has unsaved changes in the editor; ask the person to save or revert it first"
        )
    version = buffer.version if buffer is not None else None
    return DocumentSnapshot(path=path, text=on_disk.text, version=version, format=on_disk.format)


def edit_of(
    path: Path,
    doc: DocumentSnapshot,
    new_text: str,
    *,
    label: str,
    description: str,
    kind: EditKind = "change",
    new_path: Path | None = None,
) -> FileEdit:
    """The edit of a file the tool read as ``doc``: its version and format go with the edit.

    The version lets the editor refuse the edit if the buffer changed since; the format makes a
    file read from disk be written back in its own encoding.
    """
    return FileEdit(
        path=path,
        old_text=doc.text,
        new_text=new_text,
        version=doc.version,
        label=label,
        kind=kind,
        new_path=new_path,
        description=description,
        format=doc.format,
    )


def creation(path: Path, name: str, content: str, tool: str) -> FileEdit:
    """The edit that creates ``path`` with ``content`` (UTF-8; no version: nothing was read)."""
    return FileEdit(
        path=path,
        old_text=None,
        new_text=content,
        version=None,
        label=f"{tool} {name}",
        kind="create",
        description=f"Cadenza {tool}: create {name}",
    )


def check_encodable(doc: DocumentSnapshot, new_text: str, name: str) -> None:
    """Refuse up front a change that the file's legacy encoding cannot hold exactly."""
    fmt = doc.format
    if fmt is None or fmt.encoding == "utf-8":
        return
    try:
        encode_change(encode_text(doc.text, fmt), doc.text, new_text, fmt)
    except UnencodableError as exc:
        raise ToolError(f"{name} cannot take this change: {exc}; nothing was written") from None


async def deliver_text(
    ctx: ToolContext,
    path: Path,
    name: str,
    doc: DocumentSnapshot,
    new_text: str,
    *,
    label: str,
    description: str,
) -> FileEdit:
    """Replace the text of a file read as ``doc`` with ``new_text``: check it, then send it.

    Returns:
        The edit the editor applied.

    Raises:
        ToolError: The file's encoding cannot hold ``new_text``, or :func:`apply_change`
            refused; nothing was written.
    """
    check_encodable(doc, new_text, name)
    edit = edit_of(path, doc, new_text, label=label, description=description)
    await apply_change(ctx, edit, name)
    return edit


async def apply_change(ctx: ToolContext, edit: FileEdit, name: str) -> str:
    """Send ``edit`` to the editor (after the syntax guard, when ``ctx`` has it on).

    Returns:
        What the tool result adds: ``""``, or ``" (NOTE)"`` when the edit was applied in an
        unusual way (``EditOutcome.note``).

    Raises:
        ToolError: The change writes back a line as redaction showed it (``[redacted]`` over
            a secret the file holds: ``secrets.shown_redacted``), would break the file's syntax
            (``ctx.syntax_guard``), or the person, the editor or Cadenza refused it; either way
            nothing was written. The person's refusal is ``declined``.
    """
    if edit.old_text is not None and (line := shown_redacted(edit.old_text, edit.new_text)):
        raise ToolError(
            f"{name} holds a secret that was hidden from you: its line `{line}` has a value in "
            f"the file where you were shown {REDACTED}, and writing it would replace the "
            "secret; nothing was written. Leave that line out of the change and change only "
            "the lines around it"
        )
    if ctx.syntax_guard and edit.kind == "change" and edit.old_text is not None:
        change = (str(edit.path), hash(edit.old_text), hash(edit.new_text))
        if change not in ctx.syntax_warned:
            error = await anyio.to_thread.run_sync(
                breaks_syntax, edit.path, edit.old_text, edit.new_text
            )
            if error is not None:
                ctx.syntax_warned.add(change)  # the same change again is let through
                raise ToolError(
                    f"this change would make {name} invalid ({error}); nothing was written. "
                    "Look at the lines you replace and make the edit again"
                )
    outcome = await ctx.host.apply_edit(edit)
    if not outcome.applied:
        raise ToolError(_refusal(outcome, name), declined=outcome.refused_by == "person")
    return f" ({outcome.note})" if outcome.note else ""


def _refusal(outcome: EditOutcome, name: str) -> str:
    """The tool's error text for an edit that was not applied."""
    reason = f": {outcome.reason}" if outcome.reason else ""
    if outcome.refused_by == "person" and not reason:
        return f"the person rejected the change to {name}; nothing was written"
    if outcome.refused_by in ("person", "cadenza"):  # the reason says who and why
        return f"{name} was not changed{reason}"
    return f"the editor refused the edit to {name}{reason}; nothing was written"
