"""The read-only code-intelligence tools: references, definition, diagnostics.

In ``find_references``, ``go_to_definition`` and ``diagnostics`` the model names what it sees
(a file, a 1-based line, the symbol's name); the column is found here (``tools.symbols``).
Answers come from the editor's language servers or the ones Cadenza started
(``tools.intel_source``) and read as short ``path:line: text`` lines (``tools.intel_format``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from pydantic import Field
from typing_extensions import override

from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.intel import CodeIntel, IntelDiagnostic
from cadenza.tools.intel_format import format_diagnostics, format_locations
from cadenza.tools.intel_source import ask, intel_of, line_reader, source_for, symbol_at
from cadenza.tools.paths import relative_name, resolve_in_workspace
from cadenza.tools.symbols import symbol_name


class SymbolArgs(ToolArgs):
    """A symbol as the model sees it."""

    path: str = Field(description="File path relative to the workspace root.")
    line: int = Field(ge=1, description="1-based line where the symbol is written.")
    symbol: str = Field(description="The symbol's name as written on that line.")


def _listing(header: str, lines: list[str], cut: int) -> str:
    more = [f"… and {cut} more"] if cut else []
    return "\n".join([header, *lines, *more])


class FindReferences(Tool[SymbolArgs]):
    """Every place that uses a symbol, its definition included."""

    name = "find_references"
    description = (
        "List every place in the workspace that uses a symbol (its definition too), as "
        "`path:line: text`. Give the file, the line where the symbol is written, and its name."
    )
    args_model = SymbolArgs
    kind: ClassVar[ToolKind] = "search"
    read_only = True

    @override
    def title(self, args: SymbolArgs) -> str:
        return f"finding references to {args.symbol}"

    @override
    async def invoke(self, args: SymbolArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.root, args.path)
        source = source_for(ctx, path, "references")
        pos = await symbol_at(ctx, source, path, args.line, args.symbol)
        found = await ask(
            lambda: source.references(path, pos.line, pos.character), "the references"
        )
        name = symbol_name(args.symbol)
        if not found:
            return ToolResult(content=f"no references to `{name}` found")
        lines, cut = format_locations(ctx.root, found, line_reader(ctx))
        count = len(lines) + cut
        listing = _listing(f"{count} place(s) use `{name}`:", lines, cut)
        return ToolResult(content=_noted(pos.note, listing))


class GoToDefinition(Tool[SymbolArgs]):
    """Where a symbol is defined."""

    name = "go_to_definition"
    description = (
        "Show where a symbol is defined, as `path:line: text`. Give the file, the line where "
        "the symbol is written, and its name."
    )
    args_model = SymbolArgs
    kind: ClassVar[ToolKind] = "search"
    read_only = True

    @override
    def title(self, args: SymbolArgs) -> str:
        return f"finding the definition of {args.symbol}"

    @override
    async def invoke(self, args: SymbolArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.root, args.path)
        source = source_for(ctx, path, "definition")
        pos = await symbol_at(ctx, source, path, args.line, args.symbol)
        found = await ask(
            lambda: source.definition(path, pos.line, pos.character), "where it is defined"
        )
        name = symbol_name(args.symbol)
        if not found:
            return ToolResult(content=f"no definition of `{name}` found")
        lines, cut = format_locations(ctx.root, found, line_reader(ctx))
        listing = _listing(f"`{name}` is defined at:", lines, cut)
        return ToolResult(content=_noted(pos.note, listing))


def _noted(note: str, content: str) -> str:
    """``content`` after the note saying the symbol was found on another line, if any."""
    return f"{note}\n{content}" if note else content


def _everything(source: CodeIntel) -> Callable[[], Awaitable[list[IntelDiagnostic]]]:
    return lambda: source.diagnostics(None)


class DiagnosticsArgs(ToolArgs):
    """Arguments of the tool."""

    path: str | None = Field(
        default=None, description="A file relative to the workspace root; omit for every file."
    )


class Diagnostics(Tool[DiagnosticsArgs]):
    """The language servers' errors and warnings."""

    name = "diagnostics"
    description = (
        "List the errors and warnings language servers report, as `path:line: severity: "
        "message`, errors first. Give a file, or nothing for the whole workspace."
    )
    args_model = DiagnosticsArgs
    kind: ClassVar[ToolKind] = "read"
    read_only = True

    @override
    def title(self, args: DiagnosticsArgs) -> str:
        return f"checking {args.path or 'the workspace'}"

    @override
    async def invoke(self, args: DiagnosticsArgs, ctx: ToolContext) -> ToolResult:
        if args.path is None:
            source = intel_of(ctx)
            if source is None or "diagnostics" not in source.features(ctx.root):
                raise ToolError("no language server is available in this workspace")
            found = await ask(_everything(source), "its diagnostics")
            where = "the workspace"
        else:
            path = resolve_in_workspace(ctx.root, args.path)
            if not path.is_file() and ctx.host.open_document(path) is None:
                raise ToolError(f"file not found: {relative_name(ctx.root, path)}")
            source = source_for(ctx, path, "diagnostics")
            found = await ask(lambda: source.diagnostics([path]), "its diagnostics")
            where = relative_name(ctx.root, path)
        if not found:
            return ToolResult(content=f"no problems reported in {where}")
        lines, cut = format_diagnostics(ctx.root, found)
        errors = sum(1 for d in found if d.severity == "error")
        header = f"{len(found)} problem(s) in {where} ({errors} error(s)):"
        return ToolResult(content=_listing(header, lines, cut))
