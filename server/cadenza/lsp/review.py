"""Review mode ``confirm``: the person sees every change before it is applied.

Per session, ``review`` is ``auto`` (edits apply at once) or ``confirm``. In ``confirm`` an
edit goes out with a ``ChangeAnnotation`` whose ``needsConfirmation`` is true (LSP 3.17
§ChangeAnnotation), so a client that declared ``workspace.workspaceEdit.changeAnnotationSupport``
shows it for review and applies it only when the person accepts. A client without that
support (or without ``documentChanges``, or without ``applyEdit`` at all) is asked first with
``window/showMessageRequest`` (actions ``Apply`` / ``Reject``); a dismissed prompt rejects.
"""

from __future__ import annotations

import difflib
from typing import Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from cadenza.host.ports import FileEdit
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.edits import split_lines
from cadenza.lsp.rpc import shielded

ReviewMode = Literal["auto", "confirm"]

APPLY = "Apply"
REJECT = "Reject"


def annotates(features: ClientFeatures) -> bool:
    """Whether the client reviews annotated edits itself (``needsConfirmation``)."""
    return features.apply_edit and features.document_changes and features.change_annotations


def _line_stat(edit: FileEdit) -> str:
    """``+added -removed lines`` of the change (counted as a line diff)."""
    old = split_lines(edit.old_text or "") if edit.kind != "create" else []
    new = split_lines(edit.new_text) if edit.kind != "delete" else []
    added = removed = 0
    for line in difflib.unified_diff(old, new, n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"+{added} -{removed} lines"


def prompt_text(edit: FileEdit) -> str:
    """The question shown for ``edit``: the tool call's description and the size of the change."""
    what = edit.description or edit.label
    if edit.kind in ("change", "create", "delete"):
        what = f"{what} ({_line_stat(edit)})"
    return f"{what}. Apply this change?"


async def ask_to_apply(server: LanguageServer, edit: FileEdit) -> bool:
    """Ask the person with ``window/showMessageRequest``; True only for ``Apply``.

    A dismissed prompt, any other answer or an error response rejects the change.
    """
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Info,
        message=prompt_text(edit),
        actions=[types.MessageActionItem(title=APPLY), types.MessageActionItem(title=REJECT)],
    )
    try:
        chosen = await shielded(server.window_show_message_request_async(params))
    except JsonRpcException:
        return False
    return chosen is not None and chosen.title == APPLY
