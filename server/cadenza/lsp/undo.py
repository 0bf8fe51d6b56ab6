"""A session's files put back through the LSP client (``cadenza.undoSession``, ``restoreTurn``).

The host decides what is put back (``host.undo_plan.undo_session``: a live session is
refused, a file the person changed since the session's last change to it is refused by name
and nothing is undone; ``host.turn_restore`` for the files of a turn); this face reads the
files as the editor sees them (the open buffer, else the disk) and puts them back
(``SessionUndo``, the host's ``FilesPort``). The steps go out as one ``workspace/applyEdit``
(LSP 3.17 §WorkspaceEdit): text changes with the open buffer's version, ``RenameFile`` back,
``DeleteFile`` for files the session created, ``CreateFile`` for files it deleted, each only
if the client's ``resourceOperations`` allow it; when they do not (eglot), those file
operations are done on disk after the editor applied the rest, as the session did them
(``host.edits.resource_on_disk``). A client without ``applyEdit`` gets the exact bytes of the
checkpoint written on disk. Files the session never touched, such as one the person created
meanwhile, are not in the checkpoint and are never touched.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from cadenza.host.checkpoints import FileState, SessionCheckpoint, disk_state
from cadenza.host.undo_plan import UndoStep
from cadenza.host.undo_writes import write_step
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.documents import OpenDocuments, file_uri
from cadenza.lsp.editor import (
    ChangeText,
    Create,
    Delete,
    Operation,
    Rename,
    legacy_encoding_refusal,
    supports,
    unsupported,
    workspace_edit,
)
from cadenza.lsp.rpc import shielded
from cadenza.textio import (
    UndecodableError,
    UnencodableError,
    decode_bytes,
)

_RESOURCE = {"remove": "delete", "recreate": "create", "move_back": "rename"}


class UndoFailed(Exception):
    """The files were not put back; the message names the file and the reason."""


class SessionUndo:
    """A session's files as one client sees them and puts them back (``FilesPort``).

    Args:
        server: The language server (its client applies the edit).
        checkpoint: The session's checkpoint.
    """

    def __init__(self, server: LanguageServer, checkpoint: SessionCheckpoint) -> None:
        self._server = server
        self.checkpoint = checkpoint
        self.documents = OpenDocuments(server.workspace, checkpoint.root)

    def _current(self, relative: str) -> FileState:
        path = self.checkpoint.absolute(relative)
        buffer = self.documents.buffer(path)
        if buffer is not None:
            return FileState(exists=True, text=buffer.text)
        return disk_state(path)

    def current(self, relative: str) -> FileState:
        """A workspace-relative file's state now: the open buffer's text, else the disk."""
        return self._current(relative)

    async def put_back(self, steps: list[UndoStep]) -> None:
        """Do ``steps`` (``unchanged`` ones are skipped): in the editor, else on disk.

        Shared by undo and the restore of a turn.

        Raises:
            UndoFailed: The client cannot do a needed operation or refused the edit (nothing
                was changed then); writing on disk failed.
        """
        active = [step for step in steps if step.action != "unchanged"]
        if not active:
            return
        features = ClientFeatures.of(self._server.client_capabilities)
        if features.apply_edit:
            in_editor, on_disk = self._split(active, features)
            if in_editor:
                await self._send(self._operations(in_editor, features))
            self._write_all(on_disk)
        else:
            self._write(active)

    @staticmethod
    def _split(
        steps: list[UndoStep], features: ClientFeatures
    ) -> tuple[list[UndoStep], list[UndoStep]]:
        """The steps the editor can do, and those done on disk.

        On disk: creating, renaming or deleting a file when the editor takes no such
        operation (``host.edits.resource_on_disk``, as the session itself did). The editor's
        edit goes first: when it is refused, nothing is undone.
        """
        in_editor: list[UndoStep] = []
        on_disk: list[UndoStep] = []
        for step in steps:
            resource = _RESOURCE.get(step.action)
            fits = resource is None or supports(features, resource)
            (in_editor if fits else on_disk).append(step)
        return in_editor, on_disk

    def _operations(self, steps: list[UndoStep], features: ClientFeatures) -> list[Operation]:
        """The operations of one ``WorkspaceEdit`` doing ``steps``, renames first.

        Raises:
            UndoFailed: The client cannot do one of them (the message names the file).
        """
        operations: list[Operation] = []
        for step in sorted(steps, key=lambda s: s.action != "move_back"):
            resource = _RESOURCE.get(step.action)
            if resource is not None and not supports(features, resource):
                raise UndoFailed(f"cannot undo {step.path}: {unsupported(resource)}")
            path = self.checkpoint.absolute(step.path)
            target = step.target.text
            if target is None and step.action != "remove":
                raise UndoFailed(f"cannot undo {step.path}: its earlier content is not text")
            if step.action == "remove":
                operations.append(Delete(uri=self.documents.uri(path)))
            elif step.action == "recreate":
                operations.append(Create(uri=file_uri(path), text=target or ""))
            elif step.action == "move_back":
                now = self.checkpoint.absolute(step.current_path)
                operations.append(Rename(old_uri=self.documents.uri(now), new_uri=file_uri(path)))
                if step.current.text != target:
                    operations.append(self._change(step, path, features, version=False))
            else:
                operations.append(self._change(step, path, features, version=True))
        return operations

    def _change(
        self, step: UndoStep, path: Path, features: ClientFeatures, *, version: bool
    ) -> ChangeText:
        """The text change from the file's text now back to its earlier text."""
        buffer = self.documents.buffer(path) if version else None
        if buffer is not None:
            uri, at = buffer.uri, buffer.version if features.document_changes else None
        else:
            current = self.checkpoint.absolute(step.current_path)
            data = disk_state(current).data
            if data is not None and not features.exact_encodings:
                with contextlib.suppress(UndecodableError):
                    fmt = decode_bytes(data).format
                    if not fmt.is_utf8:
                        raise UndoFailed(
                            f"cannot undo {step.path}: {legacy_encoding_refusal(fmt.describe())}"
                        )
            uri, at = file_uri(path), None
        return ChangeText(
            uri=uri, version=at, old=step.current.text or "", new=step.target.text or ""
        )

    async def _send(self, operations: list[Operation]) -> None:
        features = ClientFeatures.of(self._server.client_capabilities)
        label = f"Undo Cadenza session {self.checkpoint.session_id[:8]}"
        refused = await send_undo(self._server, operations, features, label)
        if refused is not None:
            raise UndoFailed(refused)

    def _write(self, steps: list[UndoStep]) -> None:
        """Undo on disk (a client without ``applyEdit``), with the checkpoint's exact bytes.

        Raises:
            UndoFailed: A file is open in the client, or a write failed (the message says
                which; files before it in the order were already put back).
        """
        for step in steps:
            path = self.checkpoint.absolute(step.current_path)
            if self.documents.find(path) is not None:
                raise UndoFailed(
                    f"cannot undo {step.path}: it is open in the editor, which cannot apply "
                    "edits (no workspace.applyEdit)"
                )
        self._write_all(steps)

    def _write_all(self, steps: list[UndoStep]) -> None:
        """Undo ``steps`` on disk, renames first.

        Raises:
            UndoFailed: A write failed (files before it in the order were already put back).
        """
        for step in sorted(steps, key=lambda s: s.action != "move_back"):
            try:
                self._write_one(step)
            except (OSError, UnencodableError) as exc:
                raise UndoFailed(f"undoing {step.path} failed: {exc}") from None

    def _write_one(self, step: UndoStep) -> None:
        write_step(self.checkpoint.root, step)


async def send_undo(
    server: LanguageServer, operations: list[Operation], features: ClientFeatures, label: str
) -> str | None:
    """Send an undo as one ``workspace/applyEdit``; None when applied, else why not.

    Nothing is undone when it is refused. Shared by ``cadenza.undoSession`` and the per-hunk
    review (``lsp.changes``).
    """
    edit = workspace_edit(
        operations,
        codec=server.workspace.position_codec,
        document_changes=features.document_changes,
    )
    params = types.ApplyWorkspaceEditParams(edit=edit, label=label)
    try:
        result = await shielded(server.workspace_apply_edit_async(params))
    except JsonRpcException as exc:
        return f"the editor answered the undo with an error: {exc}"
    if not result.applied:
        reason = f": {result.failure_reason}" if result.failure_reason else ""
        return f"the editor did not apply the undo{reason}; nothing was undone"
    return None
