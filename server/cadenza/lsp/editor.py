"""The ``Editor`` port over LSP: buffers, edits, questions and events of one session.

- ``open_document``: the text-synced buffer (LSP §Text Document Synchronization) when the
  client has the file open. Closed files are never read through pygls's ``TextDocument``: its
  ``source`` reads the disk in universal-newline mode and would turn CRLF into LF.
- ``apply_edit``: ``workspace/applyEdit`` (see ``edits``); the server writes nothing itself
  unless the client lacks ``workspace.applyEdit``, in which case it writes atomically.
- ``ask_user``: ``cadenza/askUser`` when the client declared ``experimental.cadenza.askUser``,
  else ``window/showMessageRequest`` with the actions Yes / No / Skip.
- ``publish``: delegated to ``SessionPublisher``.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from lsprotocol import types
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from cadenza.engine.events import SessionEvent
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.edits import change_edit, create_edit, unversioned_edit
from cadenza.lsp.params import ASK_USER, AskUserParams, AskUserResult
from cadenza.lsp.publisher import SessionPublisher
from cadenza.lsp.rpc import cancellable_request, shielded
from cadenza.tools.base import ToolError
from cadenza.tools.fs import read_text, write_atomic
from cadenza.tools.host import DocumentSnapshot, EditOutcome, FileEdit

log = logging.getLogger(__name__)

ACTIONS = ("Yes", "No", "Skip")
"""``window/showMessageRequest`` cannot carry free text: the person picks one of these."""
SKIP = "Skip"


def _uri(path: Path) -> str:
    uri: str | None = from_fs_path(str(path))
    if uri is None:  # pragma: no cover - only for paths pygls cannot express
        raise ValueError(f"no file URI for {path}")
    return uri


@functools.lru_cache(maxsize=4096)
def _resolved(uri: str) -> Path | None:
    """The resolved local path of a ``file:`` URI (cached: searches ask for every file)."""
    fs_path = to_fs_path(uri)
    return None if fs_path is None else Path(fs_path).resolve()


def _disk_text(path: Path) -> str | None:
    """The file's exact text (CRLF kept), or None when missing or not UTF-8."""
    try:
        return read_text(path)
    except ToolError:
        return None


class LspEditor:
    """One session's editor, implementing ``cadenza.engine.ports.Editor``."""

    def __init__(self, server: LanguageServer, publisher: SessionPublisher) -> None:
        self._server = server
        self.publisher = publisher

    @property
    def _features(self) -> ClientFeatures:
        return ClientFeatures.of(self._server.client_capabilities)

    def _open_buffer(self, path: Path) -> TextDocument | None:
        """The client's open document for ``path`` (compared after resolving), or None."""
        for uri, document in self._server.workspace.text_documents.items():
            if _resolved(uri) == path:
                return document  # type: ignore[no-any-return]
        return None

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """The unsaved buffer of ``path`` (text and version) when open in the client."""
        document = self._open_buffer(path)
        if document is None:
            return None
        return DocumentSnapshot(path=path, text=document.source, version=document.version)

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Apply ``edit`` through the client, or on disk for a client without ``applyEdit``.

        Returns:
            ``applied=True`` when the client (or the disk write) applied it; otherwise the
            reason: the client's ``failureReason``, its error response, or a text that changed
            since the tool read it (then nothing is sent).
        """
        if edit.old_text == edit.new_text:
            return EditOutcome(applied=True)
        features = self._features
        if not features.apply_edit:
            return self._write_on_disk(edit)
        if edit.old_text is None:
            if not (features.document_changes and features.create_files):
                return self._write_on_disk(edit)
            workspace_edit = create_edit(uri=_uri(edit.path), text=edit.new_text)
        else:
            target = self._target(edit)
            if isinstance(target, EditOutcome):
                return target
            uri, version = target
            codec = self._server.workspace.position_codec
            if features.document_changes:
                workspace_edit = change_edit(
                    uri=uri, version=version, old=edit.old_text, new=edit.new_text, codec=codec
                )
            else:
                workspace_edit = unversioned_edit(
                    uri=uri, old=edit.old_text, new=edit.new_text, codec=codec
                )
        return await self._send(workspace_edit, edit.label)

    def _target(self, edit: FileEdit) -> tuple[str, int | None] | EditOutcome:
        """The document URI and version the edit applies to, or a refusal.

        The version is the one the tool read. A buffer read from disk but open now must still
        hold that text; a closed file must still hold it on disk (the client applies a
        version-null edit to whatever it finds).
        """
        document = self._open_buffer(edit.path)
        if document is None:
            if _disk_text(edit.path) != edit.old_text:
                return EditOutcome(
                    applied=False,
                    reason="the file changed (on disk, or in a buffer closed unsaved) since it "
                    "was read",
                )
            return _uri(edit.path), None
        if edit.version is not None:
            return document.uri, edit.version
        if document.source == edit.old_text:
            return document.uri, document.version
        return EditOutcome(
            applied=False, reason="the file was opened in the editor and changed since it was read"
        )

    async def _send(self, workspace_edit: types.WorkspaceEdit, label: str) -> EditOutcome:
        params = types.ApplyWorkspaceEditParams(edit=workspace_edit, label=label)
        try:
            result = await shielded(self._server.workspace_apply_edit_async(params))
        except JsonRpcException as exc:
            return EditOutcome(applied=False, reason=f"the editor answered with an error: {exc}")
        if result.applied:
            return EditOutcome(applied=True)
        return EditOutcome(applied=False, reason=result.failure_reason)

    def _write_on_disk(self, edit: FileEdit) -> EditOutcome:
        """Headless clients: write the new text atomically (UTF-8), if the disk is unchanged."""
        if edit.path.exists() and _disk_text(edit.path) != edit.old_text:
            return EditOutcome(applied=False, reason="the file changed on disk since it was read")
        write_atomic(edit.path, edit.new_text.encode("utf-8"))
        return EditOutcome(applied=True)

    async def ask_user(self, question: str) -> str | None:
        """Ask the person; None when they declined (or chose Skip / dismissed the prompt).

        Raises:
            ToolError: The client answered the request with an error or a malformed result.
        """
        try:
            if self._features.ask_user:
                return await self._ask_agent_panel(question)
            return await self._ask_message_request(question)
        except JsonRpcException as exc:
            raise ToolError(f"the editor could not ask the person: {exc}") from None

    async def _ask_agent_panel(self, question: str) -> str | None:
        params = AskUserParams(session_id=self.publisher.session_id, question=question)
        raw = await cancellable_request(self._server, ASK_USER, params.wire())
        try:
            return AskUserResult.model_validate(raw if raw is not None else {}).answer
        except ValidationError:
            raise ToolError(f"the editor's answer to {ASK_USER} is malformed: {raw!r}") from None

    async def _ask_message_request(self, question: str) -> str | None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=question,
            actions=[types.MessageActionItem(title=title) for title in ACTIONS],
        )
        chosen = await shielded(self._server.window_show_message_request_async(params))
        if chosen is None or chosen.title == SKIP:
            return None
        return chosen.title

    def publish(self, event: SessionEvent) -> None:
        """Send ``event`` to the client (synchronously, in order)."""
        self.publisher.publish(event)
