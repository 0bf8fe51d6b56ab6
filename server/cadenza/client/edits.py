"""Apply ``workspace/applyEdit`` to the files on disk: all or nothing, atomically per file.

The server describes every file change as a ``WorkspaceEdit`` (LSP 3.17, "Workspace Edit"). The
applier first computes the final bytes of every touched file in memory
(:meth:`WorkspaceEditApplier.prepare`, through :mod:`cadenza.client.plan`); only if every
operation is valid does it write them (:meth:`WorkspaceEditApplier.commit`), each through a temp
file and a rename (:func:`cadenza.tools.fs.write_atomic`), rolling back what it wrote if a write
fails. A refused edit writes nothing and says why, which the server turns into an error tool
result.

Files keep their bytes: the text is decoded as the server decodes it (UTF-8, a BOM, or a legacy
encoding detected by charset-normalizer; undecodable files are refused) and written back in the
same encoding, byte-exact outside the edited span (:mod:`cadenza.client.text`). An edit whose
``ChangeAnnotation`` needs confirmation (LSP 3.17, "Change Annotation") carries a
:class:`EditReview` in its prepared form, so the caller can show the diff and ask first.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cadenza.client.plan import EditPlan, EditRefusedError, Staged, plan_edit
from cadenza.fileread import read_regular
from cadenza.textio import UndecodableError, decode_bytes, write_atomic

ChangeKind = Literal["created", "modified", "deleted", "renamed"]


@dataclass(frozen=True, kw_only=True)
class FileChange:
    """One file's change, for the summary.

    Attributes:
        path: Path relative to the workspace root, with ``/`` separators.
        kind: What happened to the file.
        before: The text before (BOM removed; undecodable bytes replaced), None if it was absent.
        after: The text after, None if the file is gone.
        old_path: For ``renamed``: the path the content came from.
    """

    path: str
    kind: ChangeKind
    before: str | None
    after: str | None
    old_path: str | None = None


@dataclass(frozen=True, kw_only=True)
class EditApplied:
    """Every operation was valid and written; ``changes`` lists the files that differ."""

    changes: tuple[FileChange, ...]


@dataclass(frozen=True, kw_only=True)
class EditRefused:
    """Nothing was written; ``reason`` is the ``failureReason`` for the server."""

    reason: str


@dataclass(frozen=True, kw_only=True)
class EditReview:
    """What the person is asked to confirm before an annotated edit is written.

    Attributes:
        label: The annotation's label (e.g. ``edit_file app.py``).
        description: The annotation's description (what the tool call asked for), if any.
        changes: The files the edit would change, with their texts before and after.
    """

    label: str
    description: str | None
    changes: tuple[FileChange, ...]


ApplyResult = EditApplied | EditRefused


def _display_text(data: bytes | None) -> str | None:
    """The text of ``data`` for the summary (undecodable bytes shown as U+FFFD)."""
    if data is None:
        return None
    try:
        return decode_bytes(data).text
    except UndecodableError:
        return data.decode("utf-8", errors="replace")


@functools.cache
def _new_file_mode() -> int:
    """Permission bits of a newly created file under the current umask (``0o666 & ~umask``)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


class WorkspaceEditApplier:
    """Applies ``WorkspaceEdit`` objects under one workspace root.

    Args:
        root: The workspace folder; edits outside it (after following symlinks) are refused.
        position_encoding: The negotiated ``PositionEncodingKind`` (``utf-16`` unless the server
            chose another that the client offered).
        open_versions: Versions of the documents this client has opened, by URI. A
            ``TextDocumentEdit`` with a non-null version must match; the headless client opens
            none, so any non-null version is refused as stale (LSP 3.17,
            ``OptionalVersionedTextDocumentIdentifier``).
    """

    def __init__(
        self,
        root: Path,
        *,
        position_encoding: str = types.PositionEncodingKind.Utf16,
        open_versions: Mapping[str, int] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.codec = PositionCodec(position_encoding)
        self.open_versions: Mapping[str, int] = open_versions or {}

    def prepare(self, edit: types.WorkspaceEdit) -> PreparedEdit | EditRefused:
        """Validate every operation of ``edit`` and compute the result in memory.

        ``documentChanges`` wins over ``changes`` when both are present (LSP 3.17,
        ``WorkspaceEdit``). Text edits of one ``TextDocumentEdit`` all refer to the text before
        that ``TextDocumentEdit``; consecutive operations see each other's results.

        Returns:
            The prepared edit (nothing written yet), or :class:`EditRefused` with the reason (a
            URI outside the root, a missing file, a range past the end, overlapping edits, a
            stale version, an existing file to create, an undecodable file, text its encoding
            cannot hold).
        """
        plan = EditPlan(self.root, self.codec, self.open_versions)
        try:
            plan_edit(plan, edit)
            changes = _changes(plan)
        except EditRefusedError as exc:
            return EditRefused(reason=str(exc))
        return PreparedEdit(plan=plan, changes=changes, review=_review(edit, changes))

    def commit(self, prepared: PreparedEdit) -> ApplyResult:
        """Write a prepared edit, if no file it reads changed on disk since it was prepared.

        Returns:
            :class:`EditApplied`, or :class:`EditRefused` (a file changed meanwhile or a
            symbolic link took its place, or a write failed and what was written was rolled
            back).
        """
        try:
            _same_paths_since_prepared(prepared.plan)
            _unchanged_since_prepared(prepared.plan)
            _commit(prepared.plan)
        except EditRefusedError as exc:
            return EditRefused(reason=str(exc))
        return EditApplied(changes=prepared.changes)

    def apply(self, edit: types.WorkspaceEdit) -> ApplyResult:
        """Validate every operation of ``edit``, then write all files or none (no review).

        Returns:
            :class:`EditApplied` with the files that differ, or :class:`EditRefused` with the
            reason (see :meth:`prepare` and :meth:`commit`).
        """
        prepared = self.prepare(edit)
        if isinstance(prepared, EditRefused):
            return prepared
        return self.commit(prepared)


@dataclass(frozen=True, kw_only=True)
class PreparedEdit:
    """A validated ``WorkspaceEdit`` computed in memory, not yet written.

    Attributes:
        plan: The originals and the final states of every touched file.
        changes: The files that would differ.
        review: Set when an annotation of the edit needs confirmation.
    """

    plan: EditPlan
    changes: tuple[FileChange, ...]
    review: EditReview | None


def _annotation_ids(edit: types.WorkspaceEdit) -> set[str]:
    """The annotation ids the operations of ``edit`` refer to."""
    ids: set[str] = set()
    for op in edit.document_changes or ():
        if isinstance(op, types.TextDocumentEdit):
            ids.update(e.annotation_id for e in op.edits if isinstance(e, types.AnnotatedTextEdit))
        elif op.annotation_id is not None:
            ids.add(op.annotation_id)
    return ids


def _review(edit: types.WorkspaceEdit, changes: tuple[FileChange, ...]) -> EditReview | None:
    """The review of ``edit`` when an annotation it uses needs confirmation."""
    annotations = edit.change_annotations or {}
    for annotation_id in sorted(_annotation_ids(edit)):
        annotation = annotations.get(annotation_id)
        if annotation is not None and annotation.needs_confirmation:
            return EditReview(
                label=annotation.label, description=annotation.description, changes=changes
            )
    return None


def _same_paths_since_prepared(plan: EditPlan) -> None:
    """Raise when a path of the plan now resolves elsewhere (changed during a review).

    A symbolic link put there, or on its way, while the person read the edit: writing would
    replace the link with a file, or write where it points, perhaps outside the workspace.
    """
    for path in plan.original:
        try:
            now: Path | None = path.resolve()
        except (RuntimeError, OSError):  # a symbolic link loop (RuntimeError before 3.13)
            now = None
        if now == path:
            continue
        if now is None:
            where = "into a symbolic link loop"
        elif now.is_relative_to(plan.root):
            where = f"to {plan.name(now)}"
        else:
            where = "outside the workspace"
        raise EditRefusedError(
            f"{plan.name(path)} now leads {where}: a symbolic link was put in its place "
            "while the edit waited; nothing was written"
        )


def _unchanged_since_prepared(plan: EditPlan) -> None:
    """Raise when a file the plan read holds other bytes now (changed during a review)."""
    for path, original in plan.original.items():
        try:
            now: bytes | None = read_regular(path, label=plan.name(path))
        except OSError as exc:
            if os.path.lexists(path):
                raise EditRefusedError(str(exc)) from None
            now = None
        if now != original:
            raise EditRefusedError(
                f"{plan.name(path)} changed on disk while the edit waited; nothing was written"
            )


def _changes(plan: EditPlan) -> tuple[FileChange, ...]:
    """The differences between the originals and the plan, in the order files were staged."""
    rename_sources = {s.origin for s in plan.staged.values() if s.data is not None and s.origin}
    changes: list[FileChange] = []
    for path, staged in plan.staged.items():
        before, after = plan.original[path], staged.data
        if before == after or (after is None and path in rename_sources):
            continue
        kind: ChangeKind = "modified"
        old_path: str | None = None
        if after is None:
            kind = "deleted"
        elif staged.origin is not None and plan.original.get(staged.origin) is not None:
            kind, old_path = "renamed", plan.name(staged.origin)
            before = plan.original[staged.origin]
        elif before is None:
            kind = "created"
        changes.append(
            FileChange(
                path=plan.name(path),
                kind=kind,
                before=_display_text(before),
                after=_display_text(after),
                old_path=old_path,
            )
        )
    return tuple(changes)


def _commit(plan: EditPlan) -> None:
    """Write the staged files (writes first, then deletions); on an OS error, roll back.

    Raises:
        EditRefusedError: A write or delete failed; files already touched were restored.
    """
    pending = [(p, s) for p, s in plan.staged.items() if s.data != plan.original[p]]
    # Writes before deletions: a rename interrupted half-way leaves two copies, never none.
    ordered = sorted(pending, key=lambda item: item[1].data is None)
    done: list[Path] = []
    try:
        for path, staged in ordered:
            done.append(path)
            _write_one(path, staged)
    except OSError as exc:
        for path in reversed(done):
            _restore(path, plan.original[path], plan.modes[path])
        raise EditRefusedError(f"writing {plan.name(done[-1])} failed: {exc}") from None


def _write_one(path: Path, staged: Staged) -> None:
    if staged.data is None:
        path.unlink()
        return
    existed = path.exists()
    write_atomic(path, staged.data)
    if staged.origin is not None or not existed:
        # write_atomic keeps the mode of a file it replaces; a new file would keep mkstemp's 0600.
        os.chmod(path, staged.mode if staged.mode is not None else _new_file_mode())


def _restore(path: Path, data: bytes | None, mode: int | None) -> None:
    """Best effort: put ``path`` back as it was before the commit started."""
    with contextlib.suppress(OSError):
        if data is None:
            path.unlink(missing_ok=True)
            return
        write_atomic(path, data)
        if mode is not None:
            os.chmod(path, mode)
