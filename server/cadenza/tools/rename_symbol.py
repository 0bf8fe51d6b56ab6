"""``rename_symbol``: a language server's rename, sent through Cadenza's own edit path.

The server computes the whole-workspace rename (``CodeIntel.rename``); each file it changes
becomes one ``FileEdit`` sent like any other edit (``change.deliver_text``), so versions,
checkpoints, review and undo apply and the person may refuse it. A rename that would touch a
file outside the workspace, or a file that changed since the server read it, changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from typing_extensions import override

from cadenza.secrets import redact_then_cut
from cadenza.tools.base import ToolArgs, ToolContext, ToolError, ToolResult
from cadenza.tools.change import FileChangeTool, deliver_text
from cadenza.tools.documents import current_document
from cadenza.tools.host import DocumentSnapshot, FileEdit
from cadenza.tools.intel_format import inside
from cadenza.tools.intel_source import ask, source_for, symbol_at
from cadenza.tools.paths import relative_name, resolve_in_workspace
from cadenza.tools.symbols import IDENTIFIER, lines_using, symbol_name
from cadenza.tools.textfile import LINE_BREAK

MAX_CHANGED_LINES = 12
"""Changed lines shown in the result; the rest are counted."""


class RenameSymbolArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")
    line: int = Field(ge=1, description="1-based line where the symbol is written.")
    symbol: str = Field(description="The symbol's current name as written on that line.")
    new_name: str = Field(description="The new name.")


def _changed_lines(name: str, old: str, new: str) -> list[str]:
    """``name:line: text`` for each line the rename changed (same line count: it renames)."""
    before, after = LINE_BREAK.split(old), LINE_BREAK.split(new)
    if len(before) != len(after):
        return [f"{name}: changed"]
    return [
        f"{name}:{i + 1}: {redact_then_cut(b.strip(), 100, '')}"
        for i, (a, b) in enumerate(zip(before, after, strict=True))
        if a != b
    ]


def _checked_files(
    ctx: ToolContext, texts: dict[Path, str], versions: dict[Path, int | None]
) -> list[tuple[Path, str, DocumentSnapshot, str]]:
    """Each file to change: path, name, the text it has now, and its new text.

    Raises:
        ToolError: A file is outside the workspace, or changed since the server read it.
    """
    files = []
    for path, new_text in sorted(texts.items()):
        if not inside(ctx.root, path):
            raise ToolError(
                f"the rename would change {path.name}, outside the workspace; nothing was changed"
            )
        name = relative_name(ctx.root, path)
        doc = current_document(ctx.host, path, name)
        expected = versions.get(path)
        if expected is not None and doc.version is not None and doc.version != expected:
            raise ToolError(f"{name} changed while renaming; nothing was changed, try again")
        if doc.text != new_text:
            files.append((path, name, doc, new_text))
    return files


def _already_renamed(ctx: ToolContext, path: Path, old_name: str, new_name: str) -> str:
    """What to say when the file no longer uses ``old_name`` but uses ``new_name``; else "".

    A rename changes every file at once; small models then rename again in the next file and
    read "does not occur" as a reason to stop and ask. This says the file is already done.
    """
    name = relative_name(ctx.root, path)
    text = current_document(ctx.host, path, name).text
    if lines_using(text, old_name):
        return ""
    using = lines_using(text, new_name)
    if not using:
        return ""
    where = ", ".join(str(n) for n in using[:5]) + (" …" if len(using) > 5 else "")
    return (
        f"nothing to rename in {name}: it no longer uses `{old_name}` and already uses "
        f"`{new_name}` (line {where}), so this file is done (a rename changes every file "
        "that uses the name at once)"
    )


class RenameSymbol(FileChangeTool[RenameSymbolArgs]):
    """Rename a symbol everywhere the language server knows it is used."""

    name = "rename_symbol"
    description = (
        "Rename a symbol (function, class, variable, method) in every file that uses it, as the "
        "language server finds them. Give the file, the line where the symbol is written, its "
        "name and the new name."
    )
    args_model = RenameSymbolArgs

    @override
    def title(self, args: RenameSymbolArgs) -> str:
        return f"renaming {args.symbol} to {args.new_name}"

    @override
    async def invoke(self, args: RenameSymbolArgs, ctx: ToolContext) -> ToolResult:
        new_name = args.new_name.strip()
        if not IDENTIFIER.fullmatch(new_name):
            raise ToolError(f"{args.new_name!r} is not a valid name")
        old_name = symbol_name(args.symbol)
        if new_name == old_name:
            raise ToolError(f"`{old_name}` already has that name; nothing to rename")
        path = resolve_in_workspace(ctx.root, args.path)
        source = source_for(ctx, path, "rename")
        if done := _already_renamed(ctx, path, old_name, new_name):
            return ToolResult(content=done)
        pos = await symbol_at(ctx, source, path, args.line, args.symbol)
        rename = await ask(
            lambda: source.rename(path, pos.line, pos.character, new_name), "the rename"
        )
        files = _checked_files(ctx, rename.texts, rename.versions)
        if not files:
            raise ToolError(f"the language server found nothing to rename for `{old_name}`")
        applied: list[FileEdit] = []
        shown: list[str] = []
        for file_path, name, doc, new_text in files:
            try:
                edit = await deliver_text(
                    ctx,
                    file_path,
                    name,
                    doc,
                    new_text,
                    label=f"rename_symbol {name}",
                    description=f"Cadenza rename_symbol: `{old_name}` → `{new_name}` in {name}",
                )
            except ToolError as exc:
                done = ", ".join(relative_name(ctx.root, e.path) for e in applied) or "none"
                return ToolResult(
                    content=f"{exc}. The rename is incomplete: files changed so far: {done}",
                    is_error=True,
                    edits=tuple(applied),
                    declined=exc.declined,
                )
            applied.append(edit)
            shown += _changed_lines(name, doc.text, new_text)
        more = len(shown) - MAX_CHANGED_LINES
        lines = shown[:MAX_CHANGED_LINES] + ([f"… and {more} more"] if more > 0 else [])
        header = f"renamed `{old_name}` to `{new_name}` in {len(applied)} file(s):"
        content = "\n".join([*filter(None, [pos.note]), header, *lines])
        return ToolResult(content=content, edits=tuple(applied))
