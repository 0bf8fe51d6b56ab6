"""The file-changing tools: edit, write, create, delete and rename a file.

Each tool here only decides its change: ``edit_file``, ``write_file``, ``create_file``,
``delete_file`` and ``rename_file`` each compute one ``FileEdit``; finding, reading, checking and
delivering it to the editor are the shared steps of :mod:`cadenza.tools.change`. Text is matched
and written with the file's own line endings: ``old_string`` matches whatever line endings the file
has, and the replacement's lines get the endings of the lines they replace, new lines the file's
dominant ending (``textfile.carry_line_endings``). A file read from disk in a legacy encoding is
checked up front: text that its encoding cannot hold is refused before anything is sent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from pydantic import Field
from typing_extensions import override

from cadenza.secrets import redact
from cadenza.tools.base import ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.change import (
    FileChangeTool,
    apply_change,
    creation,
    deliver_text,
    edit_of,
    existing_file,
    target,
)
from cadenza.tools.documents import exists, read_document
from cadenza.tools.host import FileEdit
from cadenza.tools.matching import loose_matches
from cadenza.tools.near_miss import near_miss
from cadenza.tools.read import READ_LINES, render_read
from cadenza.tools.textfile import LINE_BREAK, carry_line_endings, dominant_line_ending

UNCHANGED = "already has exactly this text; it is unchanged"
"""The result text of a whole-file write that changed nothing (``ToolResult.unchanged``)."""

SNIPPET_CHARS = 60


def _snippet(text: str) -> str:
    """The first line of ``text``, cut to ``SNIPPET_CHARS`` characters, for descriptions."""
    line = LINE_BREAK.split(text, maxsplit=1)[0]
    more = len(line) > SNIPPET_CHARS or len(line) < len(text)
    return line[:SNIPPET_CHARS] + ("…" if more else "")


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


def _replaced(text: str, args: EditFileArgs, name: str) -> tuple[str, int, str]:
    """``text`` with ``old_string`` replaced as asked, how many places, and a note.

    The note says when ``old_string`` matched only loosely (``matching.loose_matches``).

    Raises:
        ToolError: ``old_string`` is missing (or already replaced), not unique without
            ``replace_all`` (or loosely matched in several places), or the replacement
            changes nothing but line endings.
    """
    matches = _occurrences(text, args.old_string)
    if not matches:
        return _loosely_replaced(text, args, name)
    if len(matches) > 1 and not args.replace_all:
        raise ToolError(
            f"old_string occurs {len(matches)} times in {name}; include more surrounding "
            "lines to make it unique, or set replace_all to true"
        )
    chosen = matches if args.replace_all else matches[:1]
    ending = dominant_line_ending(text)
    parts: list[str] = []
    last = 0
    for match in chosen:
        parts.append(text[last : match.start()])
        parts.append(carry_line_endings(match.group(), args.new_string, ending))
        last = match.end()
    return _changed("".join(parts) + text[last:], text, name), len(chosen), ""


def _changed(new_text: str, text: str, name: str) -> str:
    if new_text == text:
        raise ToolError(
            "old_string and new_string differ only in line endings, which follow the "
            f"file's own; nothing to change in {name}"
        )
    return new_text


def _loosely_replaced(text: str, args: EditFileArgs, name: str) -> tuple[str, int, str]:
    """The replacement when ``old_string`` is not in ``text`` exactly (see ``_replaced``)."""
    loose = loose_matches(text, args.old_string, args.new_string)
    if len(loose) > 1:
        raise ToolError(
            f"old_string is not in {name} exactly; ignoring {loose[0].how} it matches "
            f"{len(loose)} places, so nothing was changed. Copy old_string exactly from the "
            "file, with enough lines to make it unique"
        )
    if not loose:
        if _occurrences(text, args.new_string) or loose_matches(text, args.new_string, ""):
            # Small models redo an edit that already succeeded.
            raise ToolError(
                f"old_string is not in {name} but new_string is: this change is already "
                "made. Do not repeat it; go on with the rest of the task, or finish if it "
                "is done",
                settled=True,
            )
        raise ToolError(
            near_miss(text, args.old_string, name)
            or f"old_string was not found in {name}; read the file and copy the exact text"
        )
    match = loose[0]
    found = text[match.start : match.end]
    replacement = carry_line_endings(found, match.replacement, dominant_line_ending(text))
    new_text = _changed(text[: match.start] + replacement + text[match.end :], text, name)
    line = text.count("\n", 0, match.start) + 1
    note = (
        f" (old_string matched line {line} only when {match.how} is ignored"
        + (", so new_string was re-indented to match" if match.how == "indentation" else "")
        + ")"
    )
    if match.how == "skipped lines":
        last = text.count("\n", 0, match.end) + 1
        note = f" (old_string matched lines {line}-{last} with lines it left out; those were kept)"
    return new_text, 1, note


class EditFile(FileChangeTool[EditFileArgs]):
    """Replace exact text in a file."""

    name = "edit_file"
    description = (
        "Replace `old_string` with `new_string` in a file. `old_string` must match the file "
        "exactly (whitespace included) and be unique unless `replace_all` is true. Use a few "
        "lines around the change, not the whole file."
    )
    args_model = EditFileArgs

    @override
    def title(self, args: EditFileArgs) -> str:
        return f"editing {args.path}"

    @override
    async def invoke(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        path, name = target(ctx, args.path)
        if args.old_string == "":
            raise ToolError("old_string is empty; use write_file to create a file")
        if args.old_string == args.new_string:
            raise ToolError(
                "old_string and new_string are the same, so nothing would change: old_string is "
                "the text as it is now, new_string the text as it must become (empty to delete)"
            )
        doc = await read_document(ctx.host, path, name)
        new_text, replaced, note = _replaced(doc.text, args, name)
        description = (
            f"Cadenza edit_file: replace {replaced} occurrence(s) of "
            f"`{_snippet(args.old_string)}` with `{_snippet(args.new_string)}` in {name}"
        )
        edit = await deliver_text(
            ctx, path, name, doc, new_text, label=f"edit_file {name}", description=description
        )
        return ToolResult(content=f"edited {name}: {replaced} replacement(s){note}", edits=(edit,))


async def _create(ctx: ToolContext, path: Path, name: str, content: str, tool: str) -> ToolResult:
    """Create ``path`` with ``content`` (``write_file`` of a new file, ``create_file``)."""
    edit = creation(path, name, content, tool)
    note = await apply_change(ctx, edit, name)
    return ToolResult(content=f"created {name} ({len(content)} characters){note}", edits=(edit,))


class WriteFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


class WriteFile(FileChangeTool[WriteFileArgs]):
    """Create a file or replace its whole content."""

    name = "write_file"
    description = "Create a file, or overwrite an existing one, with the given complete content."
    args_model = WriteFileArgs

    @override
    def title(self, args: WriteFileArgs) -> str:
        return f"writing {args.path}"

    @override
    async def invoke(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        path, name = target(ctx, args.path)
        if path.is_dir():
            raise ToolError(f"{name} is a folder")
        if not exists(ctx.host, path):
            result = await _create(ctx, path, name, args.content, self.name)
            [created] = result.edits
            ctx.saw(path, created.new_text)  # the model wrote it whole, so it knows its text
            return result
        doc = await read_document(ctx.host, path, name)
        if ctx.shown is not None and path not in ctx.shown:
            raise ToolError(
                _unseen(ctx, path, name, doc.text),
                summary=f"not written: the agent had not read {name} yet (it is shown it now)",
            )
        content = carry_line_endings(doc.text, args.content, dominant_line_ending(doc.text))
        if content == doc.text:
            # A file written back as it is (a test file beside the one that changed): no
            # change to review or undo.
            return ToolResult(
                content=f"{name} {UNCHANGED}",
                unchanged=True,
                summary=f"{name} unchanged: written back with the text it already had",
            )
        edit = await deliver_text(
            ctx,
            path,
            name,
            doc,
            content,
            label=f"write_file {name}",
            description=f"Cadenza write_file: replace the whole content of {name}",
        )
        ctx.saw(path, edit.new_text)
        return ToolResult(content=f"overwrote {name} ({len(content)} characters)", edits=(edit,))


def _unseen(ctx: ToolContext, path: Path, name: str, text: str) -> str:
    """The refusal of a whole-file write of a file the model has not seen, showing the file.

    Small models do not read first when told to (the 1.5B model sent the same guess again);
    shown here, the file is read, and the next write can be made from its text.
    """
    seen = redact(text)  # a result is redacted anyway: a file with a secret is never whole
    shown, whole = render_read(name, seen, 1, READ_LINES, numbered=False, fenced=ctx.fenced)
    if whole and seen == text:
        ctx.saw(path, text)
    return (
        f"{name} exists, and this conversation had not shown its text: write_file replaces "
        "the whole file, so nothing was written. Its text is below; write the file again "
        f"from it, or change only the lines you mean with edit_file.\n\n{shown}"
    )


class CreateFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="Path of the new file, relative to the workspace root.")
    content: str = Field(default="", description="The content of the new file.")


SMALL_FILE_CHARS = 4_000
"""An existing file up to this size may be rewritten whole by ``create_file`` (see there)."""


def _rewrites(old: str, new: str) -> bool:
    """Whether ``new`` reads as the whole new text of a small file holding ``old``.

    The file is small, and ``new`` keeps its first non-blank line or at least half of its
    distinct non-blank lines: a whole file rewritten, not a fragment (a new function alone)
    that would wipe out the rest.
    """
    if len(old) > SMALL_FILE_CHARS:
        return False
    before = [line.strip() for line in old.splitlines() if line.strip()]
    after = {line.strip() for line in new.splitlines() if line.strip()}
    if not before or not after:
        return not before  # an empty file takes any content
    kept = len(set(before) & after)
    return before[0] in after or 2 * kept >= len(set(before))


class CreateFile(FileChangeTool[CreateFileArgs]):
    """Create a new file; an existing small file only when the content is its whole new text.

    Small models answer "implement this stub" with ``create_file`` and the whole file, and
    with a refusal ("exists already") they sent an edit that changed nothing and gave up
    (docs/lab/local-model-log.md). For a small file whose content reads as a whole rewrite
    (``_rewrites``) that is a whole-file write, and the result says so.
    """

    name = "create_file"
    description = (
        "Create a new file with the given content (folders are created as needed). An "
        "existing small file is rewritten when content is its whole new text; change other "
        "existing files with an edit tool."
    )
    args_model = CreateFileArgs

    @override
    def title(self, args: CreateFileArgs) -> str:
        return f"creating {args.path}"

    @override
    async def invoke(self, args: CreateFileArgs, ctx: ToolContext) -> ToolResult:
        path, name = target(ctx, args.path)
        if path.is_dir():
            raise ToolError(f"{name} is a folder")
        if not exists(ctx.host, path):
            return await _create(ctx, path, name, args.content, self.name)
        doc = await read_document(ctx.host, path, name)
        if not _rewrites(doc.text, args.content):
            raise ToolError(
                f"{name} exists already and content is not its whole new text; change it "
                "with an edit tool instead of creating it"
            )
        if doc.text == args.content:
            raise ToolError(
                f"{name} exists already with exactly this content; nothing to change",
                settled=True,
            )
        content = carry_line_endings(doc.text, args.content, dominant_line_ending(doc.text))
        edit = await deliver_text(
            ctx,
            path,
            name,
            doc,
            content,
            label=f"create_file {name}",
            description=f"Cadenza create_file: replace the whole content of {name}",
        )
        return ToolResult(
            content=f"{name} existed, so its whole content was replaced ({len(content)} "
            "characters)",
            edits=(edit,),
        )


class DeleteFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")


class DeleteFile(FileChangeTool[DeleteFileArgs]):
    """Delete a text file (the session's undo can restore it)."""

    name = "delete_file"
    description = "Delete a file of the workspace (text files only; folders are not deleted)."
    args_model = DeleteFileArgs
    kind: ClassVar[ToolKind] = "delete"

    @override
    def title(self, args: DeleteFileArgs) -> str:
        return f"deleting {args.path}"

    @override
    def precheck(self, args: DeleteFileArgs, ctx: ToolContext) -> None:
        existing_file(ctx, *target(ctx, args.path, link_itself=True))

    @override
    async def invoke(self, args: DeleteFileArgs, ctx: ToolContext) -> ToolResult:
        path, name = target(ctx, args.path, link_itself=True)
        doc = existing_file(ctx, path, name)
        edit = edit_of(
            path,
            doc,
            "",
            label=f"delete_file {name}",
            kind="delete",
            description=f"Cadenza delete_file: delete {name}",
        )
        note = await apply_change(ctx, edit, name)
        return ToolResult(content=f"deleted {name}{note}", edits=(edit,))


class RenameFileArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="The file to rename, relative to the workspace root.")
    new_path: str = Field(description="Its new path, relative to the workspace root.")


class RenameFile(FileChangeTool[RenameFileArgs]):
    """Rename or move a file; never overwrites."""

    name = "rename_file"
    description = (
        "Rename or move a file inside the workspace (folders are created as needed). Fails "
        "if new_path exists."
    )
    args_model = RenameFileArgs
    kind: ClassVar[ToolKind] = "move"

    @override
    def title(self, args: RenameFileArgs) -> str:
        return f"renaming {args.path} to {args.new_path}"

    @override
    async def invoke(self, args: RenameFileArgs, ctx: ToolContext) -> ToolResult:
        path, name = target(ctx, args.path, link_itself=True)
        new_path, new_name = target(ctx, args.new_path)
        if new_path == path:
            raise ToolError(f"{name} and {new_name} are the same path; nothing to rename")
        doc = existing_file(ctx, path, name)
        if new_path.exists() or ctx.host.open_document(new_path) is not None:
            raise ToolError(f"{new_name} exists already; choose another new_path")
        label = f"rename_file {name} {new_name}"
        edit = edit_of(
            path,
            doc,
            doc.text,
            label=label,
            kind="rename",
            new_path=new_path,
            description=f"Cadenza rename_file: rename {name} to {new_name}",
        )
        note = await apply_change(ctx, edit, name)
        # For the session: the old path is gone and the new one holds the text.
        gone = FileEdit(
            path=path,
            old_text=doc.text,
            new_text="",
            version=doc.version,
            label=label,
            kind="delete",
        )
        made = FileEdit(
            path=new_path,
            old_text=None,
            new_text=doc.text,
            version=None,
            label=label,
            kind="create",
        )
        return ToolResult(content=f"renamed {name} to {new_name}{note}", edits=(gone, made))
