"""A ``WorkspaceEdit`` computed in memory: every operation checked, the final bytes staged.

The applier (:mod:`cadenza.client.edits`) writes nothing until every operation of an edit is
valid. This module is that first half: it reads each touched file once, applies the operations
in order to an overlay (``TextDocumentEdit``, ``CreateFile``, ``RenameFile``, ``DeleteFile``, as
LSP 3.17 "Workspace Edit" orders them; ``changes`` when ``documentChanges`` is absent) and
refuses the whole edit, with the reason, at the first invalid one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from cadenza.client.text import DocumentText, TextError, apply_text_edits
from cadenza.fileread import read_regular

DocumentChange = types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile


class EditRefusedError(Exception):
    """One operation of a ``WorkspaceEdit`` is invalid; the message says which and why."""


@dataclass(kw_only=True)
class Staged:
    """A file's planned final state: ``data`` None means absent; ``origin`` is a rename source."""

    data: bytes | None
    mode: int | None = None
    origin: Path | None = None


class EditPlan:
    """The in-memory overlay of one ``WorkspaceEdit``: originals read once, final states staged.

    Args:
        root: The resolved workspace folder; paths outside it are refused.
        codec: Converts the edit's positions (the negotiated encoding) to code points.
        versions: Versions of the documents the client has open, by URI.
    """

    def __init__(self, root: Path, codec: PositionCodec, versions: Mapping[str, int]) -> None:
        self.root = root
        self.codec = codec
        self.versions = versions
        self.original: dict[Path, bytes | None] = {}
        self.modes: dict[Path, int | None] = {}
        self.staged: dict[Path, Staged] = {}

    def path_of(self, uri: str) -> Path:
        """The resolved path of a ``file:`` URI inside the workspace root.

        Raises:
            EditRefusedError: Not a ``file:`` URI, or the path (symlinks followed) is outside
                the root or is the root itself.
        """
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        if fs_path is None:
            raise EditRefusedError(f"{uri} is not a file: URI")
        try:
            path = Path(fs_path).resolve()
        except (RuntimeError, OSError):  # a symbolic link loop (RuntimeError before 3.13)
            raise EditRefusedError(f"{uri} runs through a symbolic link loop") from None
        if path == self.root or not path.is_relative_to(self.root):
            raise EditRefusedError(f"{uri} is outside the workspace {self.root}")
        return path

    def current(self, path: Path) -> bytes | None:
        """The bytes of ``path`` as planned so far (None: absent).

        Raises:
            EditRefusedError: The path is a folder or another file that is not a regular
                one, larger than ``fileread.MAX_TEXT_BYTES``, or cannot be read.
        """
        if path in self.staged:
            return self.staged[path].data
        if path not in self.original:
            if path.is_dir():
                raise EditRefusedError(f"{self.name(path)} is a folder")
            if not os.path.lexists(path):
                self.original[path], self.modes[path] = None, None
                return None
            try:  # only a regular file, bounded: a FIFO there must not hang the client
                self.original[path] = read_regular(path, label=self.name(path))
                self.modes[path] = path.stat().st_mode & 0o7777
            except OSError as exc:
                raise EditRefusedError(str(exc)) from None
        return self.original[path]

    def stage(self, path: Path, data: bytes | None, origin: Path | None = None) -> None:
        """Plan ``data`` as the final bytes of ``path`` (None: delete it)."""
        self.current(path)
        previous = self.staged.get(path)
        if origin is None and previous is not None:  # a later edit of a staged file
            origin, mode = previous.origin, previous.mode
        elif origin in self.staged:
            mode = self.staged[origin].mode
        else:
            mode = self.modes.get(origin or path)
        self.staged[path] = Staged(data=data, mode=mode, origin=origin)

    def name(self, path: Path) -> str:
        """``path`` relative to the root, ``/``-separated."""
        return path.relative_to(self.root).as_posix()


def plan_edit(plan: EditPlan, edit: types.WorkspaceEdit) -> None:
    """Stage every operation of ``edit`` on ``plan``, in order.

    ``documentChanges`` wins over ``changes`` when both are present (LSP 3.17,
    ``WorkspaceEdit``). Text edits of one ``TextDocumentEdit`` all refer to the text before that
    ``TextDocumentEdit``; consecutive operations see each other's results.

    Raises:
        EditRefusedError: An operation is invalid; what was staged must be dropped.
    """
    for op in _operations(edit):
        _plan_operation(plan, op)


def _operations(edit: types.WorkspaceEdit) -> list[DocumentChange]:
    if edit.document_changes is not None:
        return list(edit.document_changes)
    return [
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
            edits=list(edits),
        )
        for uri, edits in (edit.changes or {}).items()
    ]


def _plan_operation(plan: EditPlan, op: DocumentChange) -> None:
    if isinstance(op, types.TextDocumentEdit):
        _plan_text_edit(plan, op)
    elif isinstance(op, types.CreateFile):
        _plan_create(plan, op)
    elif isinstance(op, types.RenameFile):
        _plan_rename(plan, op)
    else:
        _plan_delete(plan, op)


def _plan_text_edit(plan: EditPlan, op: types.TextDocumentEdit) -> None:
    uri, version = op.text_document.uri, op.text_document.version
    path = plan.path_of(uri)
    if version is not None and plan.versions.get(uri) != version:
        have = plan.versions.get(uri)
        held = f"version {have}" if have is not None else "no open document"
        raise EditRefusedError(
            f"version mismatch for {plan.name(path)}: edit for version {version}, {held}"
        )
    data = plan.current(path)
    if data is None:
        raise EditRefusedError(f"{plan.name(path)} does not exist")
    try:
        doc = DocumentText.decode(data, plan.codec)
        new_data = doc.encode(apply_text_edits(doc, op.edits))
    except TextError as exc:
        raise EditRefusedError(f"{plan.name(path)}: {exc}") from None
    plan.stage(path, new_data)


def _plan_create(plan: EditPlan, op: types.CreateFile) -> None:
    path = plan.path_of(op.uri)
    options = op.options or types.CreateFileOptions()
    if plan.current(path) is not None:
        if options.overwrite:
            plan.stage(path, b"")
        elif not options.ignore_if_exists:
            raise EditRefusedError(f"{plan.name(path)} already exists")
        return
    plan.stage(path, b"")


def _plan_rename(plan: EditPlan, op: types.RenameFile) -> None:
    old, new = plan.path_of(op.old_uri), plan.path_of(op.new_uri)
    options = op.options or types.RenameFileOptions()
    data = plan.current(old)
    if data is None:
        raise EditRefusedError(f"{plan.name(old)} does not exist")
    if old == new:
        return
    if plan.current(new) is not None and not options.overwrite:
        if options.ignore_if_exists:
            return
        raise EditRefusedError(f"{plan.name(new)} already exists")
    plan.stage(new, data, origin=old)
    plan.stage(old, None)


def _plan_delete(plan: EditPlan, op: types.DeleteFile) -> None:
    path = plan.path_of(op.uri)
    options = op.options or types.DeleteFileOptions()
    if plan.current(path) is None:
        if not options.ignore_if_not_exists:
            raise EditRefusedError(f"{plan.name(path)} does not exist")
        return
    plan.stage(path, None)
