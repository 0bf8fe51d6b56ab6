"""``cadenza.listChanges`` / ``cadenza.reviewChanges``: review a session's latest turn per hunk.

The hunks come from the session's checkpoint (``host.turn_changes``), compared with each file
as the editor sees it now (the open buffer, else the disk). Undoing hunks goes out as one
``workspace/applyEdit`` (text changes with the open buffer's version; ``DeleteFile`` for a
file the turn created, ``CreateFile`` for one it deleted), or, for a client without
``applyEdit``, as atomic writes on disk. Then the checkpoint records the new states, so a later
``cadenza.undoSession`` still works and the next turn's prompt says what was undone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pygls.lsp.server import LanguageServer

from cadenza.host.checkpoints import CheckpointError, FileState, SessionCheckpoint, disk_state
from cadenza.host.live import LiveSessions
from cadenza.host.turn_changes import (
    HunkState,
    ReviewRefused,
    TurnFile,
    record_review,
    turn_files,
    undo_hunks,
)
from cadenza.host.undo_writes import encoded_as_on_disk
from cadenza.host.workspace_lock import WorkspaceBusy, WorkspaceLock
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.documents import OpenDocuments, buffer_path, file_uri
from cadenza.lsp.editor import ChangeText, Create, Delete, Operation, supports, unsupported
from cadenza.lsp.edits import LineIndex
from cadenza.lsp.undo import send_undo
from cadenza.lsp.unreported import Unreported
from cadenza.schema.commands import LspPosition, LspRange
from cadenza.schema.review import ChangedFile, ChangeHunk, ChangesResult, ReviewChangesArgs
from cadenza.textio import write_atomic


class ReviewFailed(Exception):
    """The review cannot be done; the message says why (nothing was changed)."""


class TurnReview:
    """The review of one session's latest turn through one client.

    Args:
        server: The language server (its client applies undo).
        checkpoint: The session's checkpoint.
    """

    def __init__(self, server: LanguageServer, checkpoint: SessionCheckpoint) -> None:
        self._server = server
        self.checkpoint = checkpoint
        self.documents = OpenDocuments(server.workspace, checkpoint.root)

    @classmethod
    def of(
        cls,
        server: LanguageServer,
        live: LiveSessions[Any],
        session_id: str,
        base: Path | None,
        *,
        changing: bool,
    ) -> TurnReview | None:
        """The review of ``session_id``; None when it changed no file.

        Raises:
            ReviewFailed: A change is asked while the session is live (its turn runs or it
                waits for an answer), or the checkpoint is unreadable.
        """
        running = live.get(session_id)
        # A run that ended stays live while its task closes its resources: not busy.
        if changing and running is not None and (running.state == "running" or running.waiting):
            raise ReviewFailed(
                f"session {session_id} is {running.state}: review its changes once its turn ends"
            )
        try:
            checkpoint = SessionCheckpoint.load(session_id, base)
        except CheckpointError as exc:
            raise ReviewFailed(str(exc)) from None
        return None if checkpoint is None else cls(server, checkpoint)

    def _current(self, relative: str) -> FileState:
        path = self.checkpoint.absolute(relative)
        buffer = self.documents.buffer(path)
        if buffer is not None:
            return FileState(exists=True, text=buffer.text)
        return disk_state(path)

    def result(self) -> ChangesResult:
        """The turn's files and hunks as they stand now."""
        files = turn_files(self.checkpoint, self._current)
        return ChangesResult(
            session_id=self.checkpoint.session_id,
            files=[self._wire(f) for f in files],
            unlisted=[] if self.checkpoint.undone else list(self.checkpoint.unlisted),
        )

    def _wire(self, file: TurnFile) -> ChangedFile:
        path = self.checkpoint.absolute(file.path)
        index = LineIndex(file.now.text or "") if file.now.exists else None
        codec = self._server.workspace.position_codec
        hunks = []
        for hunk in file.hunks:
            where = None
            if index is not None and hunk.start is not None and hunk.end is not None:
                start, end = index.position(hunk.start, codec), index.position(hunk.end, codec)
                where = LspRange(
                    start=LspPosition(line=start.line, character=start.character),
                    end=LspPosition(line=end.line, character=end.character),
                )
            elif not file.now.exists and hunk.start is not None:
                origin = LspPosition(line=0, character=0)
                where = LspRange(start=origin, end=origin)
            hunks.append(
                ChangeHunk(
                    id=hunk.id,
                    range=where,
                    old_text=hunk.old_text,
                    new_text=hunk.new_text,
                    state=hunk.state,
                )
            )
        return ChangedFile(uri=self.documents.uri(path), path=file.path, hunks=hunks)

    async def review(self, args: ReviewChangesArgs) -> ChangesResult:
        """Keep or undo the hunks ``args`` names (all pending ones when it names none).

        Raises:
            ReviewFailed: An unknown hunk id; a hunk the person changed since; the client
                cannot do a needed operation or refused the edit. Nothing was changed then.
        """
        if args.action == "undo":
            lock = WorkspaceLock(self.checkpoint.root, session_id=self.checkpoint.session_id)
            try:  # no session's command runs while the hunks are compared and put back
                async with lock.editing():
                    return await self._undo(args)
            except WorkspaceBusy as exc:
                raise ReviewFailed(f"cannot undo now: {exc}; nothing was undone") from None
        files = turn_files(self.checkpoint, self._current)
        chosen = self._chosen(files, args)
        decided: dict[str, HunkState] = {
            h.id: "kept" for f in files for h in f.hunks if h.id in chosen and h.state != "undone"
        }
        self._record(decided, {})
        return self.result()

    async def _undo(self, args: ReviewChangesArgs) -> ChangesResult:
        """Undo the hunks ``args`` names (see ``review``)."""
        files = turn_files(self.checkpoint, self._current)
        chosen = self._chosen(files, args)
        changed: dict[str, FileState] = {}
        try:
            for file in files:
                state = undo_hunks(file, chosen)
                if state is not None:
                    changed[file.path] = state
        except ReviewRefused as exc:
            raise ReviewFailed(f"cannot undo: {exc}; nothing was undone") from None
        if changed:
            await self._apply({f.path: f for f in files}, changed)
        undone: dict[str, HunkState] = {
            h.id: "undone" for f in files for h in f.hunks if h.id in chosen and f.path in changed
        }
        self._record(undone, changed)
        return self.result()

    def _chosen(self, files: list[TurnFile], args: ReviewChangesArgs) -> set[str]:
        """The hunk ids the review acts on.

        Raises:
            ReviewFailed: An id or a URI names no hunk of the turn.
        """
        known = {h.id for f in files for h in f.hunks}
        if args.hunks is None and args.uris is None:
            return {h.id for f in files for h in f.hunks if h.state == "pending"}
        chosen = set(args.hunks or [])
        if unknown := sorted(chosen - known):
            raise ReviewFailed(f"no change {unknown[0]!r} in the session's latest turn")
        for uri in args.uris or []:
            path = buffer_path(uri, self.checkpoint.root)
            relative = None if path is None else self.checkpoint.relative(path)
            found = [f for f in files if f.path == relative]
            if not found:
                raise ReviewFailed(f"the session's latest turn did not change {uri}")
            chosen.update(h.id for h in found[0].hunks)
        return chosen

    def _record(self, decided: dict[str, HunkState], changed: dict[str, FileState]) -> None:
        try:
            record_review(self.checkpoint, decided, changed)
        except CheckpointError as exc:
            raise ReviewFailed(f"the review could not be recorded: {exc}") from None

    async def _apply(self, files: dict[str, TurnFile], changed: dict[str, FileState]) -> None:
        features = ClientFeatures.of(self._server.client_capabilities)
        if not features.apply_edit:
            self._write(changed)
            return
        operations: list[Operation] = []
        edited: list[tuple[Path, str, Unreported]] = []  # read until the client reports them
        for relative, state in changed.items():
            path = self.checkpoint.absolute(relative)
            now = files[relative].now
            kind = "delete" if not state.exists else "create" if not now.exists else None
            if kind is not None and not supports(features, kind):
                raise ReviewFailed(f"cannot undo {relative}: {unsupported(kind)}")
            if kind == "delete":
                operations.append(Delete(uri=self.documents.uri(path)))
            elif kind == "create":
                operations.append(Create(uri=file_uri(path), text=state.text or ""))
            else:
                buffer = self.documents.buffer(path)
                version = buffer.version if buffer and features.document_changes else None
                uri = buffer.uri if buffer is not None else file_uri(path)
                operations.append(
                    ChangeText(uri=uri, version=version, old=now.text or "", new=state.text or "")
                )
                edited.append((path, state.text or "", self.documents.before_edit(path)))
        await self._send(operations, features)
        for path, text, before in edited:
            self.documents.applied(path, text, before)

    async def _send(self, operations: list[Operation], features: ClientFeatures) -> None:
        label = f"Undo changes of Cadenza session {self.checkpoint.session_id[:8]}"
        refused = await send_undo(self._server, operations, features, label)
        if refused is not None:
            raise ReviewFailed(refused)

    def _write(self, changed: dict[str, FileState]) -> None:
        """Undo on disk (a client without ``applyEdit``), keeping each file's encoding."""
        for relative in changed:
            if self.documents.find(self.checkpoint.absolute(relative)) is not None:
                raise ReviewFailed(
                    f"cannot undo {relative}: it is open in the editor, which cannot apply "
                    "edits (no workspace.applyEdit)"
                )
        for relative, state in changed.items():
            path = self.checkpoint.absolute(relative)
            try:
                if not state.exists:
                    path.unlink(missing_ok=True)
                    continue
                data = state.data
                if data is None:
                    data = encoded_as_on_disk(path, state.text)
                write_atomic(path, data)
            except (OSError, ValueError) as exc:
                raise ReviewFailed(f"undoing {relative} failed: {exc}") from None
