"""A rename's ``WorkspaceEdit`` from the editor, applied to the texts Cadenza reads.

The editor's rename provider answers with a ``WorkspaceEdit`` (LSP 3.17 §WorkspaceEdit):
``documentChanges`` (preferred when present) or the ``changes`` map. Its text edits are applied
here to each file's current text (the open buffer, else the disk), giving the whole new texts
that the rename tool sends through Cadenza's own edit path (versions, review, checkpoints,
undo). Later ``TextDocumentEdit``s of one document refer to the text after the earlier ones.

Refused with an ``IntelError`` (nothing is applied): resource operations (a rename that
would also create, rename or delete files), files outside the workspace, a
``TextDocumentEdit`` computed on another version of the open buffer, snippet edits, and
ranges that do not exist in the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.host.ports import IntelError, IntelRename
from cadenza.lsp.intel_text import FileText, PositionError, apply_text_edits

Edits = Sequence[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit]


def _groups(edit: types.WorkspaceEdit) -> list[tuple[str, int | None, Edits]]:
    """``(uri, version, edits)`` in order; ``version`` None when the edit names none."""
    if edit.document_changes is not None:
        groups: list[tuple[str, int | None, Edits]] = []
        for change in edit.document_changes:
            if not isinstance(change, types.TextDocumentEdit):
                raise IntelError(
                    "the rename would also create, rename or delete files, which this tool "
                    "does not do; rename the symbol only where it is used in text"
                )
            groups.append((change.text_document.uri, change.text_document.version, change.edits))
        return groups
    return [(uri, None, edits) for uri, edits in (edit.changes or {}).items()]


def rename_texts(
    edit: types.WorkspaceEdit,
    *,
    inside: Callable[[str], Path | None],
    current: Callable[[Path], tuple[str, int | None]],
    codec: PositionCodec,
) -> IntelRename:
    """The new text of every file ``edit`` changes.

    Args:
        edit: The editor's answer to ``cadenza/rename``.
        inside: The workspace path a URI names, or None when it is outside the workspace.
        current: A file's current text and buffer version (None: read from disk).
        codec: The negotiated position encoding.

    Returns:
        The changed files' new texts and the versions they were computed on.

    Raises:
        IntelError: The edit cannot be applied as described in the module's docstring, or
            changes nothing.
    """
    texts: dict[Path, str] = {}
    versions: dict[Path, int | None] = {}
    originals: dict[Path, str] = {}
    for uri, version, edits in _groups(edit):
        path = inside(uri)
        if path is None:
            raise IntelError(f"the rename would change a file outside the workspace: {uri}")
        if path not in texts:
            originals[path], versions[path] = current(path)
            texts[path] = originals[path]
        if version is not None and versions[path] is not None and version != versions[path]:
            raise IntelError(
                f"the rename was computed on another version of {path.name} (the buffer "
                "changed meanwhile); try again"
            )
        if any(isinstance(e, types.SnippetTextEdit) for e in edits):
            raise IntelError("the rename came as snippet edits, which cannot be applied")
        text_edits = [e for e in edits if not isinstance(e, types.SnippetTextEdit)]
        try:
            texts[path] = apply_text_edits(FileText(texts[path], codec), text_edits)
        except PositionError as exc:
            raise IntelError(f"the rename's edit of {path.name} does not fit it: {exc}") from None
    changed = {path: text for path, text in texts.items() if text != originals[path]}
    if not changed:
        raise IntelError("the language server's rename changes nothing")
    return IntelRename(texts=changed, versions={path: versions[path] for path in changed})
