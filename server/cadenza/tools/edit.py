"""The file-changing tools: edit, write, create, delete and rename a file.

``edit_file``, ``write_file``, ``create_file``, ``delete_file`` and ``rename_file`` each
compute one ``FileEdit`` and hand it to the editor (``ToolHost.apply_edit``); nothing here
writes to disk, so a refused or stale edit writes nothing. Text is matched and written with the
file's own line endings: ``old_string`` matches whatever line endings the file has, and the
replacement's lines get the endings of the lines they replace, new lines the file's dominant
ending (``textfile.carry_line_endings``). A file read from disk in a legacy encoding is
checked up front: text that its encoding cannot hold is refused before anything is sent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import anyio
from pydantic import Field
from typing_extensions import override

from cadenza.textio import UnencodableError, encode_change, encode_text
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.documents import current_document, exists
from cadenza.tools.fs import read_decoded
from cadenza.tools.host import DocumentSnapshot, EditOutcome, FileEdit
from cadenza.tools.paths import relative_name, resolve_for_change
from cadenza.tools.syntax import breaks_syntax
from cadenza.tools.textfile import LINE_BREAK, carry_line_endings, dominant_line_ending

EDIT_TIMEOUT_S = 3600.0
"""Seconds an edit may take: in review mode ``confirm`` a person reads the change first."""

SNIPPET_CHARS = 60


def _snippet(text: str) -> str:
    """The first line of ``text``, cut to ``SNIPPET_CHARS`` characters, for descriptions."""
    line = LINE_BREAK.split(text, maxsplit=1)[0]
    more = len(line) > SNIPPET_CHARS or len(line) < len(text)
    return line[:SNIPPET_CHARS] + ("…" if more else "")


def _refusal(outcome: EditOutcome, name: str) -> str:
    """The tool's error text for an edit that was not applied."""
    reason = f": {outcome.reason}" if outcome.reason else ""
    if outcome.refused_by == "person":
        return f"the person rejected the change to {name}{reason}; nothing was written"
    if outcome.refused_by == "cadenza":
        return f"{name} was not changed{reason}"
    return f"the editor refused the edit to {name}{reason}; nothing was written"


async def apply_change(ctx: ToolContext, edit: FileEdit, name: str) -> None:
    """Send ``edit`` to the editor (after the syntax guard, when ``ctx`` has it on).

    Raises:
        ToolError: The change would break the file's syntax (``ctx.syntax_guard``), or the
            person, the editor or Cadenza refused it; either way nothing was written.
    """
    if ctx.syntax_guard and edit.kind == "change" and edit.old_text is not None:
        change = (str(edit.path), hash(edit.old_text), hash(edit.new_text))
        if change not in ctx.syntax_warned:
            error = await anyio.to_thread.run_sync(
                breaks_syntax, edit.path, edit.old_text, edit.new_text
            )
            if error is not None:
                ctx.syntax_warned.add(change)  # the same change again is let through
                raise ToolError(
                    f"this change would make {name} invalid ({error}); nothing was written. "
                    "Look at the lines you replace and make the edit again"
                )
    outcome = await ctx.host.apply_edit(edit)
    if not outcome.applied:
        raise ToolError(_refusal(outcome, name))


def check_encodable(doc: DocumentSnapshot, new_text: str, name: str) -> None:
    """Refuse up front a change that the file's legacy encoding cannot hold exactly."""
    fmt = doc.format
    if fmt is None or fmt.encoding == "utf-8":
        return
    try:
        encode_change(encode_text(doc.text, fmt), doc.text, new_text, fmt)
    except UnencodableError as exc:
        raise ToolError(f"{name} cannot take this change: {exc}; nothing was written") from None


def _occurrences(text: str, old_string: str) -> list[re.Match[str]]:
    """Non-overlapping matches of ``old_string`` in ``text``, any line ending matching any."""
    pattern = r"(?:\r\n|\r|\n)".join(re.escape(part) for part in LINE_BREAK.split(old_string))
    return list(re.finditer(pattern, text))


class EditFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")
    old_string: str = Field(description="Exact text to replace; must occur in the file.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class EditFile(Tool[EditFileArgs]):
    """Replace exact text in a file."""

    name = "edit_file"
    description = (
        "Replace `old_string` with `new_string` in a file. `old_string` must match the file "
        "exactly (whitespace included) and be unique unless `replace_all` is true. Use a few "
        "lines around the change, not the whole file."
    )
    args_model = EditFileArgs
    kind: ClassVar[ToolKind] = "edit"
    timeout_s = EDIT_TIMEOUT_S

    @override
    def title(self, args: EditFileArgs) -> str:
        return f"editing {args.path}"

    @override
    async def invoke(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_change(ctx.root, args.path)
        name = relative_name(ctx.root, path)
        if args.old_string == "":
            raise ToolError("old_string is empty; use write_file to create a file")
        if args.old_string == args.new_string:
            raise ToolError(
                "old_string and new_string are the same, so nothing would change: old_string is "
                "the text as it is now, new_string the text as it must become (empty to delete)"
            )
        doc = current_document(ctx.host, path, name)
        matches = _occurrences(doc.text, args.old_string)
        if not matches:
            if _occurrences(doc.text, args.new_string):
                # Small models redo an edit that already succeeded (measured, issue 11).
                raise ToolError(
                    f"old_string is not in {name} but new_string is: this change is already "
                    "made. Do not repeat it; go on with the rest of the task, or finish if it "
                    "is done",
                    settled=True,
                )
            raise ToolError(
                f"old_string was not found in {name}; read the file and copy the exact text"
            )
        if len(matches) > 1 and not args.replace_all:
            raise ToolError(
                f"old_string occurs {len(matches)} times in {name}; include more surrounding "
                "lines to make it unique, or set replace_all to true"
            )
        chosen = matches if args.replace_all else matches[:1]
        ending = dominant_line_ending(doc.text)
        parts: list[str] = []
        last = 0
        for match in chosen:
            parts.append(doc.text[last : match.start()])
            parts.append(carry_line_endings(match.group(), args.new_string, ending))
            last = match.end()
        new_text = "".join(parts) + doc.text[last:]
        if new_text == doc.text:
            raise ToolError(
                "old_string and new_string differ only in line endings, which follow the "
                f"file's own; nothing to change in {name}"
            )
        check_encodable(doc, new_text, name)
        replaced = len(chosen)
        edit = FileEdit(
            path=path,
            old_text=doc.text,
            new_text=new_text,
            version=doc.version,
            label=f"edit_file {name}",
            description=(
                f"Cadenza edit_file: replace {replaced} occurrence(s) of "
                f"`{_snippet(args.old_string)}` with `{_snippet(args.new_string)}` in {name}"
            ),
            format=doc.format,
        )
        await apply_change(ctx, edit, name)
        return ToolResult(content=f"edited {name}: {replaced} replacement(s)", edits=(edit,))


class WriteFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


class WriteFile(Tool[WriteFileArgs]):
    """Create a file or replace its whole content."""

    name = "write_file"
    description = "Create a file, or overwrite an existing one, with the given complete content."
    args_model = WriteFileArgs
    kind: ClassVar[ToolKind] = "edit"
    timeout_s = EDIT_TIMEOUT_S

    @override
    def title(self, args: WriteFileArgs) -> str:
        return f"writing {args.path}"

    @override
    async def invoke(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_change(ctx.root, args.path)
        name = relative_name(ctx.root, path)
        if path.is_dir():
            raise ToolError(f"{name} is a folder")
        if not exists(ctx.host, path):
            edit = _create_edit(path, name, args.content, "write_file")
            await apply_change(ctx, edit, name)
            return ToolResult(
                content=f"created {name} ({len(args.content)} characters)", edits=(edit,)
            )
        doc = current_document(ctx.host, path, name)
        content = carry_line_endings(doc.text, args.content, dominant_line_ending(doc.text))
        check_encodable(doc, content, name)
        edit = FileEdit(
            path=path,
            old_text=doc.text,
            new_text=content,
            version=doc.version,
            label=f"write_file {name}",
            description=f"Cadenza write_file: replace the whole content of {name}",
            format=doc.format,
        )
        await apply_change(ctx, edit, name)
        return ToolResult(content=f"overwrote {name} ({len(content)} characters)", edits=(edit,))


def _create_edit(path: Path, name: str, content: str, tool: str) -> FileEdit:
    return FileEdit(
        path=path,
        old_text=None,
        new_text=content,
        version=None,
        label=f"{tool} {name}",
        kind="create",
        description=f"Cadenza {tool}: create {name}",
    )


class CreateFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="Path of the new file, relative to the workspace root.")
    content: str = Field(default="", description="The content of the new file.")


class CreateFile(Tool[CreateFileArgs]):
    """Create a new file; never overwrites."""

    name = "create_file"
    description = (
        "Create a new file with the given content (folders are created as needed). Fails if "
        "the file exists: change existing files with edit_file or write_file."
    )
    args_model = CreateFileArgs
    kind: ClassVar[ToolKind] = "edit"
    timeout_s = EDIT_TIMEOUT_S

    @override
    def title(self, args: CreateFileArgs) -> str:
        return f"creating {args.path}"

    @override
    async def invoke(self, args: CreateFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_change(ctx.root, args.path)
        name = relative_name(ctx.root, path)
        if path.is_dir():
            raise ToolError(f"{name} is a folder")
        if exists(ctx.host, path):
            raise ToolError(f"{name} exists already; edit it instead of creating it")
        edit = _create_edit(path, name, args.content, self.name)
        await apply_change(ctx, edit, name)
        return ToolResult(content=f"created {name} ({len(args.content)} characters)", edits=(edit,))


def _existing_file(ctx: ToolContext, path: Path, name: str) -> DocumentSnapshot:
    """The text of a file that exists on disk, refusing buffers that differ from it.

    Raises:
        ToolError: No file on disk (an untitled buffer included), a folder, not text, or an
            open buffer with unsaved changes (deleting or moving it would lose them).
    """
    if path.is_dir():
        raise ToolError(f"{name} is a folder; only files can be deleted or renamed")
    if not path.is_file():
        if ctx.host.open_document(path) is not None:
            raise ToolError(f"{name} is an unsaved editor buffer, not a file on disk")
        raise ToolError(f"file not found: {name}")
    buffer = ctx.host.open_document(path)
    on_disk = read_decoded(path, name)
    if buffer is not None and buffer.text != on_disk.text:
        raise ToolError(
            f"{name} has unsaved changes in the editor; ask the person to save or revert it first"
        )
    version = buffer.version if buffer is not None else None
    return DocumentSnapshot(path=path, text=on_disk.text, version=version, format=on_disk.format)


class DeleteFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")


class DeleteFile(Tool[DeleteFileArgs]):
    """Delete a text file (the session's undo can restore it)."""

    name = "delete_file"
    description = "Delete a file of the workspace (text files only; folders are not deleted)."
    args_model = DeleteFileArgs
    kind: ClassVar[ToolKind] = "delete"
    timeout_s = EDIT_TIMEOUT_S

    @override
    def title(self, args: DeleteFileArgs) -> str:
        return f"deleting {args.path}"

    @override
    async def invoke(self, args: DeleteFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_change(ctx.root, args.path, link_itself=True)
        name = relative_name(ctx.root, path)
        doc = _existing_file(ctx, path, name)
        edit = FileEdit(
            path=path,
            old_text=doc.text,
            new_text="",
            version=doc.version,
            label=f"delete_file {name}",
            kind="delete",
            description=f"Cadenza delete_file: delete {name}",
            format=doc.format,
        )
        await apply_change(ctx, edit, name)
        return ToolResult(content=f"deleted {name}", edits=(edit,))


class RenameFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="The file to rename, relative to the workspace root.")
    new_path: str = Field(description="Its new path, relative to the workspace root.")


class RenameFile(Tool[RenameFileArgs]):
    """Rename or move a file; never overwrites."""

    name = "rename_file"
    description = (
        "Rename or move a file inside the workspace (folders are created as needed). Fails "
        "if new_path exists."
    )
    args_model = RenameFileArgs
    kind: ClassVar[ToolKind] = "move"
    timeout_s = EDIT_TIMEOUT_S

    @override
    def title(self, args: RenameFileArgs) -> str:
        return f"renaming {args.path} to {args.new_path}"

    @override
    async def invoke(self, args: RenameFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_change(ctx.root, args.path, link_itself=True)
        new_path = resolve_for_change(ctx.root, args.new_path)
        name, new_name = relative_name(ctx.root, path), relative_name(ctx.root, new_path)
        if new_path == path:
            raise ToolError(f"{name} and {new_name} are the same path; nothing to rename")
        doc = _existing_file(ctx, path, name)
        if new_path.exists() or ctx.host.open_document(new_path) is not None:
            raise ToolError(f"{new_name} exists already; choose another new_path")
        edit = FileEdit(
            path=path,
            old_text=doc.text,
            new_text=doc.text,
            version=doc.version,
            label=f"rename_file {name} {new_name}",
            kind="rename",
            new_path=new_path,
            description=f"Cadenza rename_file: rename {name} to {new_name}",
            format=doc.format,
        )
        await apply_change(ctx, edit, name)
        # For the session: the old path is gone and the new one holds the text.
        gone = FileEdit(
            path=path,
            old_text=doc.text,
            new_text="",
            version=doc.version,
            label=edit.label,
            kind="delete",
        )
        made = FileEdit(
            path=new_path,
            old_text=None,
            new_text=doc.text,
            version=None,
            label=edit.label,
            kind="create",
        )
        return ToolResult(content=f"renamed {name} to {new_name}", edits=(gone, made))
