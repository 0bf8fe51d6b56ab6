"""File-changing tools: ``edit_file`` (exact replacement) and ``write_file``.

Both compute the whole new text and hand one ``FileEdit`` to the editor; nothing here writes to
disk directly, so a refused or stale edit writes nothing.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field
from typing_extensions import override

from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.documents import current_document, exists
from cadenza.tools.host import FileEdit, ToolHost
from cadenza.tools.paths import relative_name, resolve_in_workspace


class EditFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")
    old_string: str = Field(description="Exact text to replace; must occur in the file.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


async def _apply(host: ToolHost, edit: FileEdit, name: str) -> None:
    outcome = await host.apply_edit(edit)
    if not outcome.applied:
        reason = f": {outcome.reason}" if outcome.reason else ""
        raise ToolError(f"the editor refused the edit to {name}{reason}; nothing was written")


def _match_line_endings(text: str, like: str) -> str:
    """Give ``text`` the line ending of ``like`` when ``like`` uses CRLF throughout."""
    if "\r\n" in like and "\n" not in like.replace("\r\n", ""):
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text


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

    @override
    def title(self, args: EditFileArgs) -> str:
        return f"editing {args.path}"

    @override
    async def invoke(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.root, args.path)
        name = relative_name(ctx.root, path)
        if args.old_string == "":
            raise ToolError("old_string is empty; use write_file to create a file")
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are the same; nothing to change")
        doc = current_document(ctx.host, path)
        old = _match_line_endings(args.old_string, doc.text)
        new = _match_line_endings(args.new_string, doc.text)
        count = doc.text.count(old)
        if count == 0:
            raise ToolError(
                f"old_string was not found in {name}; read the file and copy the exact text"
            )
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string occurs {count} times in {name}; include more surrounding lines "
                "to make it unique, or set replace_all to true"
            )
        new_text = doc.text.replace(old, new) if args.replace_all else doc.text.replace(old, new, 1)
        edit = FileEdit(
            path=path,
            old_text=doc.text,
            new_text=new_text,
            version=doc.version,
            label=f"edit_file {name}",
        )
        await _apply(ctx.host, edit, name)
        replaced = count if args.replace_all else 1
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

    @override
    def title(self, args: WriteFileArgs) -> str:
        return f"writing {args.path}"

    @override
    async def invoke(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.root, args.path)
        name = relative_name(ctx.root, path)
        if path.is_dir():
            raise ToolError(f"{name} is a folder")
        if exists(ctx.host, path):
            doc = current_document(ctx.host, path)
            content = _match_line_endings(args.content, doc.text)
            edit = FileEdit(
                path=path,
                old_text=doc.text,
                new_text=content,
                version=doc.version,
                label=f"write_file {name}",
            )
            verb = "overwrote"
        else:
            edit = FileEdit(
                path=path,
                old_text=None,
                new_text=args.content,
                version=None,
                label=f"write_file {name}",
            )
            verb = "created"
        await _apply(ctx.host, edit, name)
        return ToolResult(content=f"{verb} {name} ({len(args.content)} characters)", edits=(edit,))
