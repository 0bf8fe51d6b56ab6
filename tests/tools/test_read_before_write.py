"""Read before overwrite (``ToolContext.shown``): a whole-file write needs the file's text seen."""

from __future__ import annotations

import json
from pathlib import Path

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolResult, text_digest
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor


async def call(ctx: ToolContext, name: str, **args: object) -> ToolResult:
    prepared = prepare(ToolCall(id="1", name=name, arguments=json.dumps(args)), default_tools())
    assert isinstance(prepared, PreparedCall), prepared
    return await run(prepared, ctx)


async def test_without_the_set_there_is_no_guard(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    ctx = ToolContext(root=tmp_path, host=MemoryEditor())
    result = await call(ctx, "write_file", path="a.py", content="x = 2\n")
    assert not result.is_error and (tmp_path / "a.py").read_text() == "x = 2\n"


async def test_an_unseen_file_is_shown_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    editor = MemoryEditor()
    ctx = ToolContext(root=tmp_path, host=editor, shown={}, fenced=True)
    refused = await call(ctx, "write_file", path="a.py", content="x = 2\n")
    assert refused.is_error and editor.edits == []
    assert "nothing was written" in refused.content
    assert refused.summary == "not written: the agent had not read a.py yet (it is shown it now)"
    assert refused.content.endswith("a.py\n```python\nx = 1\n```")
    shown_now = {(tmp_path / "a.py").resolve(): text_digest("x = 1\n")}
    assert ctx.shown == shown_now  # the next write goes
    written = await call(ctx, "write_file", path="a.py", content="x = 2\n")
    assert not written.is_error and (tmp_path / "a.py").read_text() == "x = 2\n"


async def test_a_whole_read_counts_a_partial_one_does_not(tmp_path: Path) -> None:
    (tmp_path / "long.py").write_text("".join(f"v{i} = {i}\n" for i in range(10)))
    (tmp_path / "short.py").write_text("y = 1\n")
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), shown={})
    await call(ctx, "read_file", path="long.py", limit=5)
    await call(ctx, "read_file", path="short.py")
    assert ctx.shown == {(tmp_path / "short.py").resolve(): text_digest("y = 1\n")}


async def test_new_files_and_files_written_whole_need_no_read(tmp_path: Path) -> None:
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), shown={})
    created = await call(ctx, "write_file", path="new.py", content="z = 1\n")
    assert not created.is_error
    again = await call(ctx, "write_file", path="new.py", content="z = 2\n")
    assert not again.is_error and (tmp_path / "new.py").read_text() == "z = 2\n"
    assert ctx.shown == {(tmp_path / "new.py").resolve(): text_digest("z = 2\n")}  # as written


async def test_writing_a_file_back_as_it_is_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("def test():\n    pass\n")
    editor = MemoryEditor()
    result = await call(
        ToolContext(root=tmp_path, host=editor),
        "write_file",
        path="t.py",
        content="def test():\n    pass\n",
    )
    assert not result.is_error and result.edits == () and editor.edits == []
    assert result.unchanged and "unchanged" in result.content
    assert result.summary == "t.py unchanged: written back with the text it already had"
    other = await call(
        ToolContext(root=tmp_path, host=editor), "write_file", path="t.py", content=""
    )
    assert not other.unchanged and len(other.edits) == 1
