"""``read_file`` through the client's ``fs/read_text_file`` (unsaved buffers included).

An ACP session's ``read_file`` is ``ClientReadFile``: the same tool, which first asks the
client for the file's current text (``AcpEditor.refresh``) when the client declared
``fs.readTextFile``, so the read (and the edits computed on it) see the editor's unsaved text.
Without the capability, or when the client cannot read the file, it reads the disk as before.
"""

from __future__ import annotations

from typing_extensions import override

from cadenza.acp.editor import AcpEditor
from cadenza.tools.base import ToolContext, ToolError, ToolResult
from cadenza.tools.freshness import ReadStamp
from cadenza.tools.paths import resolve_in_workspace
from cadenza.tools.read import ReadFile, ReadFileArgs


class ClientReadFile(ReadFile):
    """``read_file`` that learns the client's text of the file first."""

    def __init__(self, editor: AcpEditor) -> None:
        super().__init__()
        self._editor = editor

    @override
    async def read(self, args: ReadFileArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        # ``read``, not ``invoke``: the call pipeline reads with the stamp it took once.
        try:
            path = resolve_in_workspace(ctx.root, args.path)
        except ToolError:
            return await super().read(args, ctx, stamp)  # it says what is wrong with the path
        await self._editor.refresh(path)
        return await super().read(args, ctx, stamp)
