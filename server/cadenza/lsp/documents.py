"""The client's open documents (LSP §Text Document Synchronization), found by path.

pygls keeps every document the client opened (``didOpen``) with its text and version, updated
by ``didChange``; these are the buffers the agent reads and edits. A document is matched to a
tool's path after resolving both. Two kinds of URI name a buffer:

- ``file:`` URIs: the file's path.
- ``untitled:`` URIs (a buffer never saved): ``untitled:/abs/path.py`` names that path (VS Code
  uses it for a new file not yet written); a name without a path, e.g. ``untitled:Untitled-1``,
  is addressed by the tools as that very string, i.e. the path ``<root>/untitled:Untitled-1``.

A buffer's text is the document's, except right after an applied edit the client has not
reported yet (``unreported``): then it is the text the edit left, without a version.

Closed files are never read through pygls's ``TextDocument``: its ``source`` reads the disk in
universal-newline mode and would turn CRLF into LF.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from pygls.uris import from_fs_path, to_fs_path, uri_scheme
from pygls.workspace import TextDocument, Workspace

from cadenza.host.checkpoints import disk_state
from cadenza.lsp.unreported import Unreported, caught_up, kept

UNTITLED = "untitled"


@functools.lru_cache(maxsize=4096)
def _resolved(uri: str) -> Path | None:
    """The resolved local path of a ``file:`` URI (cached: searches ask for every file)."""
    fs_path = to_fs_path(uri)
    return None if fs_path is None else Path(fs_path).resolve()


def buffer_path(uri: str, root: Path) -> Path | None:
    """The path by which tools address the document ``uri``, or None (another scheme).

    Args:
        uri: A document URI from ``didOpen``.
        root: The session's resolved workspace root.
    """
    scheme = uri_scheme(uri)
    if scheme == "file":
        return _resolved(uri)
    if scheme != UNTITLED:
        return None
    rest = unquote(uri[len(UNTITLED) + 1 :])
    if rest.startswith("/"):
        return Path("/" + rest.lstrip("/")).resolve()
    return root / uri


def file_uri(path: Path) -> str:
    """The ``file:`` URI of an absolute path.

    Raises:
        ValueError: pygls cannot express the path as a URI.
    """
    uri: str | None = from_fs_path(str(path))
    if uri is None:  # pragma: no cover - only for paths pygls cannot express
        raise ValueError(f"no file URI for {path}")
    return uri


@dataclass(frozen=True, kw_only=True)
class Buffer:
    """A client buffer's text; ``version`` None when known only from an applied edit."""

    uri: str
    text: str
    version: int | None


def _disk_text(path: Path) -> str | None:
    return disk_state(path).text


class OpenDocuments:
    """The client's open documents, looked up by the paths tools use.

    Args:
        workspace: pygls's workspace (its ``text_documents`` are the open ones).
        root: The session's resolved workspace root.
    """

    def __init__(self, workspace: Workspace, root: Path) -> None:
        self._workspace = workspace
        self.root = root

    def find(self, path: Path) -> TextDocument | None:
        """The open document addressed by ``path``, or None when the client has none.

        Safe in a worker thread (the read tools probe buffers there): it iterates a copy, so
        a ``didOpen`` on the loop meanwhile cannot break the iteration.
        """
        for uri, document in list(self._workspace.text_documents.items()):
            if buffer_path(uri, self.root) == path:
                return document  # type: ignore[no-any-return]
        return None

    def uri(self, path: Path) -> str:
        """The URI to edit ``path`` by: the open document's, else the file's."""
        document = self.find(path)
        return document.uri if document is not None else file_uri(path)

    def buffer(self, path: Path) -> Buffer | None:
        """The client's buffer of ``path``; None when it holds none.

        Its open document, or the text an applied edit left there that the client has not
        reported yet (version None).
        """
        document = self.find(path)
        entries = kept(self._workspace)
        entry = entries.get(path)
        if entry is not None:
            disk = _disk_text(path) if document is None else None
            if not caught_up(entry, document, disk):
                uri = document.uri if document is not None else file_uri(path)
                return Buffer(uri=uri, text=entry.text, version=None)
            entries.pop(path, None)  # another thread may have dropped it already
        if document is None:
            return None
        return Buffer(uri=document.uri, text=document.source, version=document.version)

    def before_edit(self, path: Path, *, creates: bool = False) -> Unreported:
        """What the client reports of ``path`` before an edit is sent (see ``applied``).

        ``creates``: the edit creates the file (the client leaves it empty on disk).
        """
        buffer = self.buffer(path)
        entry = kept(self._workspace).get(path)
        if entry is not None:  # still unreported: the client's report is older still
            return Unreported(
                text="", base=entry.base, base_version=entry.base_version, edits=entry.edits
            )
        if creates:
            return Unreported(text="", base="", base_version=None, edits=0)
        if buffer is not None:
            return Unreported(text="", base=buffer.text, base_version=buffer.version, edits=0)
        return Unreported(text="", base=_disk_text(path), base_version=None, edits=0)

    def applied(self, path: Path, text: str, before: Unreported) -> None:
        """The client applied an edit leaving ``text`` in ``path``'s buffer.

        Args:
            path: The file edited.
            text: Its text after the edit.
            before: ``before_edit`` of the edit, taken before it was sent.
        """
        entries = kept(self._workspace)
        entries[path] = Unreported(
            text=text, base=before.base, base_version=before.base_version, edits=before.edits + 1
        )
        self.buffer(path)  # drops it at once when the client already reported the edit

    def forget(self, path: Path) -> None:
        """``path`` was deleted or renamed away: no text of it is kept."""
        kept(self._workspace).pop(path, None)
