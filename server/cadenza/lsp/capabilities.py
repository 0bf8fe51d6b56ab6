"""What the connected client can do, read once from its ``ClientCapabilities``.

Each flag names the LSP 3.17 capability it comes from; a missing capability means "no"
(LSP §Client Capabilities: "absent means not supported").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability


def _declares_ask_user(experimental: Any) -> bool:
    """``experimental.cadenza.askUser`` is ``true`` (Cadenza's own client capability)."""
    if not isinstance(experimental, dict):
        return False
    cadenza = experimental.get("cadenza")
    return isinstance(cadenza, dict) and cadenza.get("askUser") is True


@dataclass(frozen=True, kw_only=True)
class ClientFeatures:
    """The client capabilities Cadenza acts on.

    Attributes:
        apply_edit: ``workspace.applyEdit``: the client applies ``workspace/applyEdit``.
            Without it the server writes files itself (headless clients).
        document_changes: ``workspace.workspaceEdit.documentChanges``: versioned
            ``TextDocumentEdit``s are understood.
        create_files: ``workspace.workspaceEdit.resourceOperations`` contains ``create``.
        work_done_progress: ``window.workDoneProgress``: the server may create progress tokens
            with ``window/workDoneProgress/create``.
        ask_user: ``experimental.cadenza.askUser``: the client answers ``cadenza/askUser``.
    """

    apply_edit: bool
    document_changes: bool
    create_files: bool
    work_done_progress: bool
    ask_user: bool

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities) -> ClientFeatures:
        """Read the flags from the client's ``initialize`` capabilities."""
        operations = get_capability(
            capabilities, "workspace.workspace_edit.resource_operations", []
        )
        return cls(
            apply_edit=bool(get_capability(capabilities, "workspace.apply_edit", False)),
            document_changes=bool(
                get_capability(capabilities, "workspace.workspace_edit.document_changes", False)
            ),
            create_files=types.ResourceOperationKind.Create in operations,
            work_done_progress=bool(
                get_capability(capabilities, "window.work_done_progress", False)
            ),
            ask_user=_declares_ask_user(get_capability(capabilities, "experimental", None)),
        )
