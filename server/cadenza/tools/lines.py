"""``replace_lines``: the line-range edit style (``[loop] edit = "line_range"``).

The model names a 1-based, inclusive line range as ``read_file`` numbers it under that style
(``12| text``) and the lines that replace it; measured against exact ``old_string``
replacement and whole-file writes on the agent task set (docs/lab/local-model-log.md).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field
from typing_extensions import override

from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from cadenza.tools.change import EDIT_TIMEOUT_S, apply_change, check_encodable
from cadenza.tools.documents import read_document
from cadenza.tools.host import FileEdit
from cadenza.tools.paths import relative_name, resolve_for_change
from cadenza.tools.textfile import dominant_line_ending, lines_with_ends


class ReplaceLinesArgs(ToolArgs):
    """Arguments of the tool."""

    path: str = Field(description="File path relative to the workspace root.")
    start_line: int = Field(ge=1, description="First line to replace (1-based).")
    end_line: int = Field(
        ge=0, description="Last line to replace (inclusive); start_line - 1 inserts before it."
    )
    new_text: str = Field(description="The new lines (empty deletes the range).")


class ReplaceLines(Tool[ReplaceLinesArgs]):
    """Replace a range of lines of a file."""

    name = "replace_lines"
    description = (
        "Replace lines start_line..end_line (1-based, inclusive, as read_file numbers them) "
        "of a file with new_text. Read the file first; line numbers change after an edit."
    )
    args_model = ReplaceLinesArgs
    kind: ClassVar[ToolKind] = "edit"
    timeout_s = EDIT_TIMEOUT_S

    @override
    def title(self, args: ReplaceLinesArgs) -> str:
        return f"editing {args.path} lines {args.start_line}-{args.end_line}"

    @override
    async def invoke(self, args: ReplaceLinesArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_change(ctx.root, args.path)
        name = relative_name(ctx.root, path)
        doc = await read_document(ctx.host, path, name)
        lines = lines_with_ends(doc.text)
        total = len(lines)
        if args.start_line > total + 1:
            raise ToolError(
                f"start_line {args.start_line} is past the end of {name} "
                f"({total} line{'' if total == 1 else 's'})"
            )
        if not args.start_line - 1 <= args.end_line <= total:
            raise ToolError(
                f"end_line must be between start_line - 1 ({args.start_line - 1}) and the last "
                f"line ({total}); got {args.end_line}"
            )
        ending = dominant_line_ending(doc.text)
        body = "".join(line.rstrip("\r\n") + ending for line in lines_with_ends(args.new_text))
        before, after = lines[: args.start_line - 1], lines[args.end_line :]
        unterminated = bool(lines) and not lines[-1].endswith(("\n", "\r"))
        if body and unterminated and not after:
            if before and len(before) == total:  # appending after a last line with no break
                before[-1] += ending
            else:  # the range held the last line: keep the file's missing final break
                body = body[: -len(ending)]
        new_text = "".join(before) + body + "".join(after)
        if new_text == doc.text:
            raise ToolError(f"new_text is the same as lines {args.start_line}-{args.end_line}")
        check_encodable(doc, new_text, name)
        edit = FileEdit(
            path=path,
            old_text=doc.text,
            new_text=new_text,
            version=doc.version,
            label=f"replace_lines {name}",
            description=(
                f"Cadenza replace_lines: lines {args.start_line}-{args.end_line} of {name}"
            ),
            format=doc.format,
        )
        await apply_change(ctx, edit, name)
        count = len(body.splitlines())
        return ToolResult(
            content=(
                f"edited {name}: lines {args.start_line}-{args.end_line} replaced by {count} "
                "line(s); read it again before another replace_lines"
            ),
            edits=(edit,),
        )
