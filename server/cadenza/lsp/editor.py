"""The ``Editor`` port over LSP: buffers, edits, questions and events of one session.

- ``open_document``: the text-synced buffer (LSP §Text Document Synchronization) when the
  client has the file open (``documents``); untitled buffers included.
- ``apply_edit``: every ``FileEdit`` becomes one ``workspace/applyEdit`` (``workspace_edit``,
  also the undo's): ``documentChanges`` when the client takes them, else the ``changes`` map
  (text changes only); a text change is minimal ``TextEdit``s in the negotiated position
  encoding (``edits.text_edits``). ``resourceOperations`` decide whether files are created,
  renamed or deleted by the client; when they may not be, Cadenza does it on disk and the
  tool result says so (``host.edits.resource_on_disk``). A client without
  ``workspace.applyEdit`` gets the edit written on disk atomically (``tools.fs.apply_on_disk``),
  except for files it has open, which are never written behind its back. The server keeps no
  copy of a buffer that it could write back later; after an applied edit it reads the text
  the edit left until the client reports that buffer (``documents``, ``unreported``).
- Every edit goes out through the host's checkpointed delivery (``host.edits``): the file's
  state before the session's first change, the pending state, then the state after, so
  ``cadenza.undoSession`` can restore it (also after a crash mid-edit).
- In review mode ``confirm`` the person sees each change first (``review``).
- ``ask_user`` and ``request_permission``: the person's prompts (``prompts``).
- ``publish``: delegated to ``SessionPublisher``.
- ``code_intel``: the editor's language servers (``code_intel``) when the client declared
  ``experimental.cadenza.codeIntelligence``.

Rules of ``workspace_edit``, from LSP 3.17:

- §WorkspaceEdit: ``documentChanges`` carry ``TextDocumentEdit``s whose
  ``OptionalVersionedTextDocumentIdentifier.version`` is the buffer version the edit was
  computed on (null for a file the editor has not open) and the resource operations
  ``CreateFile``, ``RenameFile``, ``DeleteFile`` (§resourceOperations decides which a client
  takes); clients without ``documentChanges`` get the ``changes`` map of text edits only.
- §ChangeAnnotation: in review mode ``confirm`` every operation carries the annotation
  ``cadenza`` with ``needsConfirmation: true``, so an editor that supports annotations shows
  the change for review before applying it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import PositionCodec

from cadenza.host.checkpoints import FileState, SessionCheckpoint, disk_state
from cadenza.host.edits import deliver_checkpointed, resource_on_disk, touched
from cadenza.host.ports import (
    CodeIntel,
    DocumentSnapshot,
    EditOutcome,
    FileEdit,
    PermissionAnswer,
    PermissionRequest,
    SessionEvent,
    apply_on_disk,
)
from cadenza.lsp import prompts
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.code_intel import EditorCodeIntel, declared_features
from cadenza.lsp.documents import OpenDocuments, file_uri
from cadenza.lsp.edits import text_edits
from cadenza.lsp.publisher import SessionPublisher
from cadenza.lsp.review import ReviewMode, annotates, ask_to_apply
from cadenza.lsp.rpc import shielded

log = logging.getLogger(__name__)


_UNSUPPORTED = {
    "create": ("creating files", types.ResourceOperationKind.Create),
    "rename": ("renaming files", types.ResourceOperationKind.Rename),
    "delete": ("deleting files", types.ResourceOperationKind.Delete),
}


def _refused(reason: str) -> EditOutcome:
    return EditOutcome(applied=False, reason=reason, refused_by="cadenza")


def unsupported(kind: str) -> str:
    """The reason given when the client cannot do a resource operation of ``kind``."""
    what, operation = _UNSUPPORTED[kind]
    return (
        f"the editor does not support {what} (its workspace.workspaceEdit.resourceOperations "
        f'lacks "{operation.value}")'
    )


def supports(features: ClientFeatures, kind: str) -> bool:
    """Whether the client takes the resource operation ``kind`` (in ``documentChanges``)."""
    allowed = {
        "create": features.create_files,
        "rename": features.rename_files,
        "delete": features.delete_files,
    }
    return features.document_changes and allowed.get(kind, False)


def legacy_encoding_refusal(encoding: str) -> str:
    """The reason given for a closed file in a legacy encoding on an editor client."""
    return (
        f"it is encoded in {encoding} and not open in the editor, which would decode it with "
        "its own settings (possibly as UTF-8, damaging it when saved); ask the person to open "
        "it in the editor with that encoding, then edit it again"
    )


# --- one WorkspaceEdit (the session's edits and the undo's) -------------------------------

ANNOTATION_ID = "cadenza"
"""The one ``ChangeAnnotationIdentifier`` of an edit that needs confirmation."""


@dataclass(frozen=True, kw_only=True)
class ChangeText:
    """Turn the text of ``uri`` from ``old`` into ``new`` (``version``: None for closed)."""

    uri: str
    version: int | None
    old: str
    new: str


@dataclass(frozen=True, kw_only=True)
class Create:
    """Create ``uri`` (it must not exist) holding ``text``."""

    uri: str
    text: str


@dataclass(frozen=True, kw_only=True)
class Delete:
    """Delete the file ``uri``."""

    uri: str


@dataclass(frozen=True, kw_only=True)
class Rename:
    """Rename ``old_uri`` to ``new_uri`` (which must not exist)."""

    old_uri: str
    new_uri: str


Operation = ChangeText | Create | Delete | Rename


@dataclass(frozen=True, kw_only=True)
class Review:
    """The ``ChangeAnnotation`` of an edit that the person must confirm."""

    label: str
    description: str


DocumentChange = types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile


def _document_changes(
    op: Operation, codec: PositionCodec, annotation_id: str | None
) -> list[DocumentChange]:
    if isinstance(op, ChangeText):
        edits = text_edits(op.old, op.new, codec, annotation_id)
        return [document_edit(op.uri, op.version, edits)] if edits else []
    if isinstance(op, Create):
        create = types.CreateFile(
            uri=op.uri,
            options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False),
            annotation_id=annotation_id,
        )
        if not op.text:
            return [create]
        start = types.Position(line=0, character=0)
        insert: types.TextEdit | types.AnnotatedTextEdit
        if annotation_id is None:
            insert = types.TextEdit(range=types.Range(start=start, end=start), new_text=op.text)
        else:
            insert = types.AnnotatedTextEdit(
                range=types.Range(start=start, end=start),
                new_text=op.text,
                annotation_id=annotation_id,
            )
        return [create, document_edit(op.uri, None, [insert])]
    if isinstance(op, Delete):
        return [
            types.DeleteFile(
                uri=op.uri,
                options=types.DeleteFileOptions(recursive=False, ignore_if_not_exists=False),
                annotation_id=annotation_id,
            )
        ]
    return [
        types.RenameFile(
            old_uri=op.old_uri,
            new_uri=op.new_uri,
            options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
            annotation_id=annotation_id,
        )
    ]


def document_edit(
    uri: str, version: int | None, edits: list[types.TextEdit | types.AnnotatedTextEdit]
) -> types.TextDocumentEdit:
    """A ``TextDocumentEdit`` on ``uri`` at ``version`` (None: the file as the editor finds it)."""
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.TextDocumentEdit(text_document=identifier, edits=list(edits))


def workspace_edit(
    operations: list[Operation],
    *,
    codec: PositionCodec,
    document_changes: bool = True,
    review: Review | None = None,
) -> types.WorkspaceEdit:
    """One ``WorkspaceEdit`` doing ``operations`` in order.

    Args:
        operations: Text changes and resource operations.
        codec: The negotiated position encoding.
        document_changes: The client takes ``documentChanges``; otherwise the ``changes`` map
            is used, which holds text changes only (no versions, no annotations).
        review: When set (and ``document_changes``), every operation refers to one
            ``ChangeAnnotation`` with ``needsConfirmation: true``.

    Raises:
        ValueError: A resource operation without ``document_changes``.
    """
    if not document_changes:
        changes: dict[str, list[types.TextEdit]] = {}
        for op in operations:
            if not isinstance(op, ChangeText):
                raise ValueError("resource operations need documentChanges")
            edits = text_edits(op.old, op.new, codec)
            changes.setdefault(op.uri, []).extend(
                e for e in edits if not isinstance(e, types.AnnotatedTextEdit)
            )
        return types.WorkspaceEdit(changes=changes)
    annotation_id = ANNOTATION_ID if review is not None else None
    result: list[DocumentChange] = []
    for op in operations:
        result.extend(_document_changes(op, codec, annotation_id))
    annotations = None
    if review is not None:
        annotations = {
            ANNOTATION_ID: types.ChangeAnnotation(
                label=review.label, needs_confirmation=True, description=review.description
            )
        }
    return types.WorkspaceEdit(document_changes=result, change_annotations=annotations)


# --- the session's edits ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Send:
    """An edit ready for ``workspace/applyEdit``."""

    operations: list[Operation]


@dataclass(frozen=True, kw_only=True)
class _Write:
    """An edit to write on disk (a client without ``applyEdit``).

    ``resource``: a create, rename or delete the client cannot do (``resource_on_disk``).
    """

    resource: bool = False


class LspEditor:
    """One session's editor, implementing ``cadenza.engine.ports.Editor``.

    Args:
        server: The language server.
        publisher: Sends the session's events.
        review: ``auto`` or ``confirm`` (see ``review``).
        checkpoint: Where the files' states before the session's changes are recorded; None
            records nothing (no undo).
    """

    def __init__(
        self,
        server: LanguageServer,
        publisher: SessionPublisher,
        *,
        review: ReviewMode = "auto",
        checkpoint: SessionCheckpoint | None = None,
    ) -> None:
        self._server = server
        self.publisher = publisher
        self.review: ReviewMode = review
        self.checkpoint = checkpoint
        self.documents = OpenDocuments(server.workspace, publisher.root)

    @property
    def _features(self) -> ClientFeatures:
        return ClientFeatures.of(self._server.client_capabilities)

    def code_intel(self) -> CodeIntel | None:
        """The editor's language servers when the client declared them (``code_intel``).

        None otherwise: the host may start its own language server.
        """
        offered = declared_features(self._server.client_capabilities)
        if not offered:
            return None
        return EditorCodeIntel(self._server, self.documents, offered)

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """The unsaved buffer of ``path`` (text and version) when open in the client."""
        buffer = self.documents.buffer(path)
        if buffer is None:
            return None
        return DocumentSnapshot(path=path, text=buffer.text, version=buffer.version)

    def current_state(self, path: Path) -> FileState:
        """``path`` as the editor sees it: the open buffer's text, else the disk."""
        buffer = self.documents.buffer(path)
        if buffer is not None:
            return FileState(exists=True, text=buffer.text)
        return disk_state(path)

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Apply ``edit`` through the client, or on disk for a client without ``applyEdit``.

        Returns:
            ``applied=True`` when the client (or the disk write) applied it. Otherwise who
            stopped it and why: the client (its ``failureReason`` or error response), the
            person (review mode ``confirm``), or Cadenza before sending anything (the text
            changed since the tool read it, a closed file in a legacy encoding, a checkpoint
            that cannot be written). A resource operation the client lacks is done on disk,
            with a ``note``.
        """
        if edit.kind == "change" and edit.old_text == edit.new_text:
            return EditOutcome(applied=True)
        features = self._features
        plan = self._plan(edit, features)
        if isinstance(plan, EditOutcome):
            return plan
        return await deliver_checkpointed(
            self.checkpoint,
            edit,
            state_of=self.current_state,
            deliver=partial(self._deliver, edit, plan, features),
            warn=self._warn,
        )

    def _warn(self, text: str) -> None:
        """The checkpoint could not be updated: the server log and the session log."""
        log.warning("session %s: %s", self.publisher.session_id, text)
        self.publisher.log(text)

    async def _deliver(
        self, edit: FileEdit, plan: _Send | _Write, features: ClientFeatures
    ) -> EditOutcome:
        """Ask the person first when needed, then send the edit or write it."""
        annotated = self.review == "confirm" and annotates(features)
        if (
            self.review == "confirm"
            and not annotated
            and not await ask_to_apply(self._server, edit)
        ):
            return EditOutcome(applied=False, reason=None, refused_by="person")
        if isinstance(plan, _Write) and plan.resource:
            is_open = self.documents.find(edit.path) is not None
            why = (
                f"the editor takes no {edit.kind} operations in workspace edits "
                "(workspace.workspaceEdit.resourceOperations)"
            )
            return resource_on_disk(edit, self.publisher.root, why=why, open_in_editor=is_open)
        if isinstance(plan, _Write):
            return apply_on_disk(edit)
        review = Review(label=edit.label, description=edit.description) if annotated else None
        workspace = workspace_edit(
            plan.operations,
            codec=self._server.workspace.position_codec,
            document_changes=features.document_changes,
            review=review,
        )
        if edit.kind not in ("change", "create"):
            for path in touched(edit):
                self.documents.forget(path)
            return await self._send(workspace, edit.label, reviewed=annotated)
        before = self.documents.before_edit(edit.path, creates=edit.kind == "create")
        outcome = await self._send(workspace, edit.label, reviewed=annotated)
        if outcome.applied:  # read this text until the client reports its buffer
            self.documents.applied(edit.path, edit.new_text, before)
        return outcome

    def _plan(self, edit: FileEdit, features: ClientFeatures) -> _Send | _Write | EditOutcome:
        """How to apply ``edit`` with this client, or why it cannot be."""
        if not features.apply_edit:
            if self.documents.find(edit.path) is not None:
                return _refused(
                    "it is open in the editor, which cannot apply edits (no "
                    "workspace.applyEdit); Cadenza never writes a file behind an open buffer"
                )
            return _Write()
        if edit.kind != "change" and not supports(features, edit.kind):
            return _Write(resource=True)  # done on disk, and said so (``resource_on_disk``)
        if edit.kind == "create":
            return _Send(operations=[Create(uri=file_uri(edit.path), text=edit.new_text)])
        if edit.kind == "delete":
            return _Send(operations=[Delete(uri=self.documents.uri(edit.path))])
        if edit.kind == "rename":
            assert edit.new_path is not None  # FileEdit.__post_init__
            return _Send(
                operations=[
                    Rename(old_uri=self.documents.uri(edit.path), new_uri=file_uri(edit.new_path))
                ]
            )
        target = self._target(edit, features)
        if isinstance(target, EditOutcome):
            return target
        uri, version = target
        assert edit.old_text is not None  # a change
        if not features.document_changes:
            version = None
        change = ChangeText(uri=uri, version=version, old=edit.old_text, new=edit.new_text)
        return _Send(operations=[change])

    def _target(
        self, edit: FileEdit, features: ClientFeatures
    ) -> tuple[str, int | None] | EditOutcome:
        """The document URI and version a text change applies to, or a refusal.

        The version is the one the tool read. A file read from disk but open now must still
        hold that text in its buffer; a closed file must still hold it on disk (the client
        applies a version-null edit to whatever it finds), and must be UTF-8 unless the
        client decodes legacy encodings as Cadenza does.
        """
        buffer = self.documents.buffer(edit.path)
        if buffer is not None and buffer.version is None:  # an edit the client has not reported
            if buffer.text != edit.old_text:
                return _refused("the file changed in the editor since it was read")
            return buffer.uri, None
        document = self.documents.find(edit.path)
        if document is None:
            state = disk_state(edit.path)
            if state.text != edit.old_text:
                return _refused(
                    "the file changed (on disk, or in a buffer closed unsaved) since it was read"
                )
            fmt = edit.format
            if fmt is not None and not fmt.is_utf8 and not features.exact_encodings:
                return _refused(legacy_encoding_refusal(fmt.describe()))
            return file_uri(edit.path), None
        if edit.version is not None and features.document_changes:
            return document.uri, edit.version
        if document.source == edit.old_text:
            return document.uri, document.version
        return _refused("the file was opened in the editor and changed since it was read")

    async def _send(
        self, workspace_edit: types.WorkspaceEdit, label: str, *, reviewed: bool
    ) -> EditOutcome:
        """Send the edit; ``reviewed``: it needs the person's confirmation in the editor.

        A reviewed edit the editor did not apply is the person's refusal only when nothing
        else explains it: LSP's answer cannot tell a discarded preview from a failure, so a
        change the client names as failed (``failedChange``) or a document that moved past
        the version the edit was made for (the clients refuse a stale version before they
        show the preview) is the editor's refusal, which the model must hear about and the
        done checks judge, not a decision of the person's.
        """
        params = types.ApplyWorkspaceEditParams(edit=workspace_edit, label=label)
        try:
            result = await shielded(self._server.workspace_apply_edit_async(params))
        except JsonRpcException as exc:
            return EditOutcome(applied=False, reason=f"the editor answered with an error: {exc}")
        if result.applied:
            return EditOutcome(applied=True)
        stale = self._stale(workspace_edit)
        reason = result.failure_reason or stale
        if reviewed and result.failed_change is None and stale is None:
            return EditOutcome(applied=False, reason=reason, refused_by="person")
        return EditOutcome(applied=False, reason=reason, refused_by="editor")

    def _stale(self, workspace_edit: types.WorkspaceEdit) -> str | None:
        """Why ``workspace_edit`` no longer fits the client's documents, or None.

        A versioned text change whose document the client has reported at another version
        since (the ``didChange`` that made it stale arrives before the answer).
        """
        for change in workspace_edit.document_changes or []:
            if not isinstance(change, types.TextDocumentEdit):
                continue
            sent = change.text_document.version
            document = self._server.workspace.text_documents.get(change.text_document.uri)
            if sent is not None and document is not None and document.version != sent:
                return "the file changed in the editor since it was read"
        return None

    async def ask_user(self, question: str) -> str | None:
        """Ask the person (``prompts.ask_tool_question``); None when they declined.

        Raises:
            ToolError: The client answered the request with an error or a malformed result.
        """
        return await prompts.ask_tool_question(self._server, self.publisher.session_id, question)

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask whether a gated tool call may run (``prompts.permission``)."""
        return await prompts.permission(
            self._server, session_id=self.publisher.session_id, request=request
        )

    def publish(self, event: SessionEvent) -> None:
        """Send ``event`` to the client (synchronously, in order)."""
        self.publisher.publish(event)
