"""``cadenza.undoSession``: put back every file a session changed, and nothing else.

The session's checkpoint (``host.checkpoints``) says which files it changed and how they
were before. ``plan_undo`` compares each with the state the session left it in, as the editor
sees it now (the open buffer, else the disk); a file the person changed since is refused by
name and nothing is undone. The steps then go out as one ``workspace/applyEdit`` (LSP 3.17
§WorkspaceEdit): text changes with the open buffer's version, ``RenameFile`` back,
``DeleteFile`` for files the session created, ``CreateFile`` for files it deleted, each only
if the client's ``resourceOperations`` allow it; when they do not (eglot), those file
operations are done on disk after the editor applied the rest, as the session did them
(``host.edits.resource_on_disk``). A client without ``applyEdit`` gets the exact bytes of the
checkpoint written on disk. Files the session never touched, such as one the person created
meanwhile, are not in the checkpoint and are never touched.
The comparison and the writes hold the workspace's lock shared (``host.workspace_lock``): no
session's command runs meanwhile, and the undo is never counted as a command's change.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from cadenza.host.checkpoints import CheckpointError, FileState, SessionCheckpoint, disk_state
from cadenza.host.live import LiveSessions
from cadenza.host.undo_plan import UndoRefused, UndoStep, plan_undo, undone_files
from cadenza.host.undo_writes import write_step
from cadenza.host.workspace_lock import WorkspaceBusy, WorkspaceLock
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.documents import OpenDocuments, file_uri
from cadenza.lsp.editor import legacy_encoding_refusal, supports, unsupported
from cadenza.lsp.edits import ChangeText, Create, Delete, Operation, Rename, workspace_edit
from cadenza.lsp.rpc import shielded
from cadenza.schema.commands import UndoSessionResult
from cadenza.textio import (
    UndecodableError,
    UnencodableError,
    decode_bytes,
)

_RESOURCE = {"remove": "delete", "recreate": "create", "move_back": "rename"}


ENDING_GRACE_S = 1.0
"""Seconds an undo waits for a session that is finishing (its end already published)."""


class UndoFailed(Exception):
    """Undo did not happen; the message names the file and the reason (nothing was undone)."""


async def undo_session(
    server: LanguageServer,
    live: LiveSessions[Any],
    session_id: str,
    base: Path | None = None,
) -> UndoSessionResult:
    """Undo the changes of a session that is over (``cadenza.undoSession``).

    The session may be from an earlier run of the server: its checkpoint is on disk.

    Args:
        server: The language server (its client applies the undo).
        live: The server's live sessions (a running one is refused).
        session_id: The session.
        base: Where checkpoints live (None: ``<user state dir>/checkpoints``).

    Raises:
        UndoFailed: The session is still running, unknown (no checkpoint), or its undo was
            refused (the message names the file and why).
    """
    running = live.get(session_id)
    if running is not None and running.task is not None and not running.waiting:
        # Its session_end may be out already while the task winds down.
        await asyncio.wait({running.task}, timeout=ENDING_GRACE_S)
    if (running := live.get(session_id)) is not None:
        raise UndoFailed(
            f"session {session_id} is still {running.state}; cancel it "
            "(cadenza.cancelSession) before undoing it"
        )
    try:
        checkpoint = SessionCheckpoint.load(session_id, base)
    except CheckpointError as exc:
        raise UndoFailed(str(exc)) from None
    if checkpoint is None:
        if session_id in live.ended:  # it changed no file
            return UndoSessionResult(session_id=session_id, files=[], unchanged=[])
        raise UndoFailed(
            f"Cadenza has no record of session {session_id}: it changed no file, or its "
            "checkpoint was removed"
        )
    try:  # no other session's command runs while the files are compared and put back
        async with WorkspaceLock(checkpoint.root, session_id=session_id).editing():
            return await SessionUndo(server, checkpoint).run()
    except WorkspaceBusy as exc:
        raise UndoFailed(f"cannot undo session {session_id} now: {exc}") from None


class SessionUndo:
    """Undo of one session's changes through one client.

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

    async def run(self) -> UndoSessionResult:
        """Undo the session's changes.

        Raises:
            UndoFailed: Undone already; a file changed since the session's last change to it;
                the client cannot do a needed operation or refused the edit; writing failed.
        """
        checkpoint = self.checkpoint
        name = checkpoint.session_id
        if checkpoint.undone:
            raise UndoFailed(f"session {name} was undone already")
        try:
            steps = plan_undo(checkpoint, self._current)
        except UndoRefused as exc:
            raise UndoFailed(f"cannot undo session {name}: {exc}") from None
        await self.put_back(steps)
        try:
            checkpoint.mark_undone()
        except CheckpointError as exc:
            raise UndoFailed(f"session {name} was undone, but {exc}") from None
        return UndoSessionResult(
            session_id=name,
            files=undone_files(steps),
            unchanged=[step.path for step in steps if step.action == "unchanged"],
        )

    def current(self, relative: str) -> FileState:
        """A workspace-relative file's state now: the open buffer's text, else the disk."""
        return self._current(relative)

    async def put_back(self, steps: list[UndoStep]) -> None:
        """Do ``steps`` (``unchanged`` ones are skipped): in the editor, else on disk.

        Shared by undo and the restore of a turn (``lsp.restore_turn``).

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
