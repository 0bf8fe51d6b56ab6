"""Byte-exact file reading for tools, and ``FileEdit``s applied on disk.

Files are read as bytes and decoded deliberately (``textio.decode_bytes``): no universal-newline
translation, so CRLF survives (pygls's ``TextDocument.source`` would turn CRLF into LF), a BOM is
remembered, and a legacy encoding is detected and kept. ``apply_on_disk`` is the one disk writer of
edits: for clients without ``workspace/applyEdit`` and for undo on such clients.
"""

from __future__ import annotations

import os
from pathlib import Path

from cadenza.fileread import FileReadError, NotRegularFile, read_regular
from cadenza.textio import (
    PLAIN_UTF8,
    DecodedText,
    UndecodableError,
    UnencodableError,
    decode_bytes,
    encode_change,
    encode_text,
    write_atomic,
)
from cadenza.tools.base import ToolError
from cadenza.tools.host import EditOutcome, FileEdit


def read_decoded(path: Path, name: str | None = None) -> DecodedText:
    """Read a text file exactly: its text (line endings kept, no BOM) and its format.

    Args:
        path: The file.
        name: How to call the file in messages (default: its file name).

    Raises:
        ToolError: The file is missing, a directory or another file that is not a regular
            one (a FIFO, a device), larger than ``fileread.MAX_TEXT_BYTES``, unreadable, or
            not text that decodes exactly (binary, or damaged): such a file is never read or
            rewritten lossily.
    """
    label = name or path.name
    try:
        data = read_regular(path, label=label)
    except NotRegularFile as exc:
        if exc.kind == "directory":
            raise ToolError(f"{label} is a directory; use list_files") from None
        raise ToolError(str(exc)) from None
    except FileReadError as exc:
        raise ToolError(str(exc)) from None
    try:
        return decode_bytes(data)
    except UndecodableError as exc:
        raise ToolError(
            f"{label} is not text Cadenza can edit safely: {exc}; it was not read or changed"
        ) from None


def read_text(path: Path) -> str:
    """The text of a file (see ``read_decoded``).

    Raises:
        ToolError: As ``read_decoded``.
    """
    return read_decoded(path).text


def _refused(reason: str) -> EditOutcome:
    return EditOutcome(applied=False, reason=reason, refused_by="cadenza")


def _unchanged_since_read(edit: FileEdit) -> tuple[bytes, DecodedText] | EditOutcome:
    """The file's bytes and text now, if it still holds ``edit.old_text``."""
    try:
        data = read_regular(edit.path)
    except FileReadError as exc:
        if not edit.path.exists():
            return _refused("the file was removed since it was read")
        return _refused(str(exc))
    try:
        decoded = decode_bytes(data)
    except UndecodableError as exc:
        return _refused(f"the file is not text any more: {exc}")
    if decoded.text != edit.old_text:
        return _refused("the file changed on disk since it was read")
    return data, decoded


def apply_on_disk(edit: FileEdit) -> EditOutcome:
    """Apply ``edit`` to the files on disk, atomically, if they still hold what was read.

    A text change is written in the file's own format (``encode_change``: every byte outside
    the changed span stays as it was); a new file is UTF-8; a rename never overwrites.

    Returns:
        ``applied=True``, or a refusal by ``cadenza`` saying why nothing was written.
    """
    try:
        return _apply_on_disk(edit)
    except OSError as exc:
        return _refused(f"writing failed: {exc.strerror or exc}")


def _apply_on_disk(edit: FileEdit) -> EditOutcome:
    if edit.kind == "create":
        if edit.path.exists():
            return _refused("the file exists already")
        write_atomic(edit.path, encode_text(edit.new_text, PLAIN_UTF8))
        return EditOutcome(applied=True)
    if edit.kind == "rename":
        assert edit.new_path is not None  # FileEdit.__post_init__
        if not edit.path.exists():
            return _refused("the file was removed since it was read")
        if edit.new_path.exists():
            return _refused(f"{edit.new_path.name} exists already")
        edit.new_path.parent.mkdir(parents=True, exist_ok=True)
        os.rename(edit.path, edit.new_path)
        return EditOutcome(applied=True)
    current = _unchanged_since_read(edit)
    if isinstance(current, EditOutcome):
        return current
    data, decoded = current
    if edit.kind == "delete":
        edit.path.unlink()
        return EditOutcome(applied=True)
    try:
        new_data = encode_change(data, decoded.text, edit.new_text, decoded.format)
    except UnencodableError as exc:
        return _refused(str(exc))
    write_atomic(edit.path, new_data)
    return EditOutcome(applied=True)
