"""What the connected client can do, read once from its ``ClientCapabilities``.

Each flag names the LSP 3.17 capability it comes from; a missing capability means "no"
(LSP §Client Capabilities: "absent means not supported").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability


def _declares(experimental: Any, name: str) -> bool:
    """``experimental.cadenza.<name>`` is ``true`` (Cadenza's own client capabilities)."""
    if not isinstance(experimental, dict):
        return False
    cadenza = experimental.get("cadenza")
    return isinstance(cadenza, dict) and cadenza.get(name) is True


@dataclass(frozen=True, kw_only=True)
class ClientFeatures:
    """The client capabilities Cadenza acts on.

    Attributes:
        apply_edit: ``workspace.applyEdit``: the client applies ``workspace/applyEdit``.
            Without it the server writes files itself (headless clients).
        document_changes: ``workspace.workspaceEdit.documentChanges``: versioned
            ``TextDocumentEdit``s are understood.
        create_files: ``workspace.workspaceEdit.resourceOperations`` contains ``create``.
        rename_files: ``resourceOperations`` contains ``rename``.
        delete_files: ``resourceOperations`` contains ``delete``.
        change_annotations: ``workspace.workspaceEdit.changeAnnotationSupport`` is present:
            the client honours ``ChangeAnnotation``s (``needsConfirmation`` shows a preview).
        work_done_progress: ``window.workDoneProgress``: the server may create progress tokens
            with ``window/workDoneProgress/create``.
        ask_user: ``experimental.cadenza.askUser``: the client answers ``cadenza/askUser``.
        request_permission: ``experimental.cadenza.requestPermission``: the client answers
            ``cadenza/requestPermission`` (else ``window/showMessageRequest``).
        waiting_human: ``experimental.cadenza.waitingHuman``: the client answers
            ``cadenza/waitingHuman`` (else ``window/showMessageRequest``).
        show_document: ``window.showDocument.support``: the client opens URIs for
            ``window/showDocument`` (LSP 3.16).
        exact_encodings: ``experimental.cadenza.exactEncodings``: for a closed file the client
            decodes bytes as Cadenza does (UTF-8, a UTF-8 BOM, or the legacy encoding that
            charset-normalizer detects, refusing anything that does not round-trip) and writes
            the edited file back in that encoding, byte-exact outside the edit (Cadenza's
            headless client). Other editors decode with their own settings, so Cadenza does
            not send them edits of closed files in legacy encodings.
    """

    apply_edit: bool
    document_changes: bool
    create_files: bool
    work_done_progress: bool
    ask_user: bool
    rename_files: bool = False
    delete_files: bool = False
    change_annotations: bool = False
    exact_encodings: bool = False
    request_permission: bool = False
    waiting_human: bool = False
    show_document: bool = False

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities) -> ClientFeatures:
        """Read the flags from the client's ``initialize`` capabilities."""
        operations = (
            get_capability(capabilities, "workspace.workspace_edit.resource_operations", None) or []
        )
        experimental = get_capability(capabilities, "experimental", None)
        return cls(
            apply_edit=bool(get_capability(capabilities, "workspace.apply_edit", False)),
            document_changes=bool(
                get_capability(capabilities, "workspace.workspace_edit.document_changes", False)
            ),
            create_files=types.ResourceOperationKind.Create in operations,
            rename_files=types.ResourceOperationKind.Rename in operations,
            delete_files=types.ResourceOperationKind.Delete in operations,
            change_annotations=get_capability(
                capabilities, "workspace.workspace_edit.change_annotation_support", None
            )
            is not None,
            work_done_progress=bool(
                get_capability(capabilities, "window.work_done_progress", False)
            ),
            ask_user=_declares(experimental, "askUser"),
            request_permission=_declares(experimental, "requestPermission"),
            waiting_human=_declares(experimental, "waitingHuman"),
            show_document=bool(get_capability(capabilities, "window.show_document.support", False)),
            exact_encodings=_declares(experimental, "exactEncodings"),
        )
