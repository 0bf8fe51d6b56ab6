r"""``FileEdit`` → ``WorkspaceEdit``: one minimal ``TextEdit`` with positions in client units.

Rules, from LSP 3.17:
- §Text Documents / Position: a line ends at ``\n``, ``\r\n`` or ``\r`` (and nothing else:
  not the ``\x0b``, ``\x0c``, ``\x1c``-``\x1e``, ``\x85``, ``\u2028``, ``\u2029`` that
  Python's ``str.splitlines`` also splits on); ``character`` counts code units of the
  negotiated ``positionEncoding`` (UTF-16 by default). Python strings index code points, so
  every column goes through pygls's ``PositionCodec``.
- A position between the ``\r`` and ``\n`` of a CRLF is not addressable, so edit ranges are
  widened to never split a CRLF.
- §WorkspaceEdit: ``documentChanges`` carry a ``TextDocumentEdit`` whose
  ``OptionalVersionedTextDocumentIdentifier.version`` is the buffer version the edit was
  computed on, or null for a file the editor has not open; a new file is a ``CreateFile``
  followed by an insertion at 0:0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

_LINE_END = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Split ``text`` into LSP lines, each keeping its terminator.

    Returns:
        At least one line; text ending in a terminator gets a final empty line, so every
        offset from 0 to ``len(text)`` has a line.
    """
    lines: list[str] = []
    start = 0
    for match in _LINE_END.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    lines.append(text[start:])
    return lines


def offset_to_position(lines: list[str], offset: int, codec: PositionCodec) -> types.Position:
    """The LSP position of a code-point ``offset`` into ``"".join(lines)``.

    Args:
        lines: The text split by ``split_lines``.
        offset: Code points from the start of the text, 0 to ``len(text)``.
        codec: The negotiated encoding's codec (``character`` in its code units).

    Raises:
        ValueError: ``offset`` is outside the text.
    """
    if offset < 0:
        raise ValueError(f"offset {offset} is negative")
    line_start = 0
    for number, line in enumerate(lines):
        if offset < line_start:
            raise ValueError(f"offset {offset} splits the CRLF ending line {number - 1}")
        content_end = line_start + len(line.rstrip("\r\n"))
        if offset <= content_end:
            column = ServerTextPosition(line=number, character=offset - line_start)
            return codec.position_to_client_units(lines, column)
        line_start += len(line)
    raise ValueError(f"offset {offset} is past the end of the text ({line_start} code points)")


@dataclass(frozen=True, kw_only=True)
class Replacement:
    """Replace ``old[start:end]`` (code points) by ``text``."""

    start: int
    end: int
    text: str


def minimal_replacement(old: str, new: str) -> Replacement:
    r"""The smallest single replacement turning ``old`` into ``new``.

    Common prefix and suffix are kept (compared in code points); the range never starts or
    ends between the ``\r`` and ``\n`` of a CRLF in ``old``.
    """
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start, end = prefix, len(old) - suffix
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1
    if 0 < end < len(old) and old[end - 1] == "\r" and old[end] == "\n":
        end += 1
        suffix -= 1
    return Replacement(start=start, end=end, text=new[start : len(new) - suffix])


def minimal_text_edit(old: str, new: str, codec: PositionCodec) -> types.TextEdit:
    """One ``TextEdit`` on ``old`` that yields ``new``, positions in ``codec``'s code units."""
    change = minimal_replacement(old, new)
    lines = split_lines(old)
    return types.TextEdit(
        range=types.Range(
            start=offset_to_position(lines, change.start, codec),
            end=offset_to_position(lines, change.end, codec),
        ),
        new_text=change.text,
    )


def document_edit(
    uri: str, version: int | None, edits: list[types.TextEdit]
) -> types.TextDocumentEdit:
    """A ``TextDocumentEdit`` on ``uri`` at ``version`` (None: the file as the editor finds it)."""
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.TextDocumentEdit(text_document=identifier, edits=list(edits))


def change_edit(
    *, uri: str, version: int | None, old: str, new: str, codec: PositionCodec
) -> types.WorkspaceEdit:
    """``documentChanges`` with one minimal edit of an existing document."""
    return types.WorkspaceEdit(
        document_changes=[document_edit(uri, version, [minimal_text_edit(old, new, codec)])]
    )


def create_edit(*, uri: str, text: str) -> types.WorkspaceEdit:
    """``documentChanges`` creating ``uri`` (failing if it exists) and inserting ``text``."""
    create = types.CreateFile(
        uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)
    )
    start = types.Position(line=0, character=0)
    insert = types.TextEdit(range=types.Range(start=start, end=start), new_text=text)
    changes: list[types.TextDocumentEdit | types.CreateFile] = [create]
    if text:
        changes.append(document_edit(uri, None, [insert]))
    return types.WorkspaceEdit(document_changes=changes)


def unversioned_edit(*, uri: str, old: str, new: str, codec: PositionCodec) -> types.WorkspaceEdit:
    """The ``changes`` form, for clients without ``documentChanges`` (no version check)."""
    return types.WorkspaceEdit(changes={uri: [minimal_text_edit(old, new, codec)]})
