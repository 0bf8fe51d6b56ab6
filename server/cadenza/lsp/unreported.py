"""Texts that Cadenza's applied edits left in the client's buffers, not yet reported back.

A client answers ``workspace/applyEdit`` before it reports the buffer the edit changed: VS Code
opens a closed file's buffer for the edit and sends its ``didOpen`` (and, for full document
sync, its ``didChange``, delayed ~200 ms by vscode-languageclient) after the answer. Until
then the server's copy (pygls's document, or the disk for a file it has no document of) lacks
the edit, and the agent's next edit of that file would be computed on stale text. So after an
applied text change the server keeps the text it left (``Unreported``) and reads it instead,
until the client's report catches up:

- the document's text is the edit's, or its version moved past the one it had when the edits
  were sent by at least their number (their ``didChange``: the buffer is the truth again, a
  person's typing included);
- a ``didOpen`` whose text is not the pre-edit text (it holds the edit);
- for a file without a document, the disk no longer holds the pre-edit text (the client
  saved it, or someone changed it: the disk is the truth, and a later edit computed on the
  kept text is refused as stale).

The texts are kept per pygls ``Workspace`` (one per connection), so every reader of the
connection's documents (the sessions' editors, ``cadenza.listChanges``, undo) sees them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path

from pygls.workspace import TextDocument, Workspace


@dataclass(kw_only=True)
class Unreported:
    """The text an applied edit left in a buffer the client has not reported yet.

    Attributes:
        text: The buffer's text after the edit.
        base: The text the client's report would still show before the edit (the document's,
            or the disk's for a file without a document).
        base_version: The document's version when the edit was sent; None while the server
            has no document of the file.
        edits: The applied edits not reported yet (each moves the client's version by one).
    """

    text: str
    base: str | None
    base_version: int | None
    edits: int = 1


_KEPT: weakref.WeakKeyDictionary[Workspace, dict[Path, Unreported]] = weakref.WeakKeyDictionary()


def kept(workspace: Workspace) -> dict[Path, Unreported]:
    """The unreported texts of ``workspace``'s client, by path."""
    return _KEPT.setdefault(workspace, {})


def caught_up(entry: Unreported, document: TextDocument | None, disk: str | None) -> bool:
    """Whether the client's report (``document``, else ``disk``) now supersedes ``entry``.

    ``disk``: the file's text on disk (None when absent or unreadable); used without a document.
    A ``didOpen`` still showing the pre-edit text makes its version the one to move past.
    """
    if document is None:
        return disk != entry.base
    text = document.source
    if text == entry.text:
        return True
    if entry.base_version is None:
        if text != entry.base:
            return True  # opened with the edit in it (and maybe more)
        entry.base_version = document.version  # opened before the edit: wait for didChange
        return False
    return document.version is not None and document.version >= entry.base_version + entry.edits
