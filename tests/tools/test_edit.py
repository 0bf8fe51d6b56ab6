"""Edit semantics: exact replacement, absent/ambiguous old_string, refusals write nothing."""

from __future__ import annotations

from pathlib import Path

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.host import DocumentSnapshot
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor


async def invoke(root: Path, editor: MemoryEditor, name: str, **args: object) -> ToolResult:
    import json

    prepared = prepare(ToolCall(id="1", name=name, arguments=json.dumps(args)), default_tools())
    assert isinstance(prepared, PreparedCall), prepared
    return await run(prepared, ToolContext(root=root, host=editor))


async def test_exact_replacement(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    editor = MemoryEditor()
    result = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="return 1", new_string="return 2"
    )
    assert not result.is_error
    assert (tmp_path / "a.py").read_text() == "def f():\n    return 2\n"
    assert result.edits[0].old_text == "def f():\n    return 1\n"


async def test_absent_and_ambiguous_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\nx = 1\n")
    editor = MemoryEditor()
    absent = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="y", new_string="z"
    )
    assert absent.is_error and "not found" in absent.content
    ambiguous = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="x = 1", new_string="x = 2"
    )
    assert ambiguous.is_error and "2 times" in ambiguous.content
    assert editor.edits == []
    assert (tmp_path / "a.py").read_text() == "x = 1\nx = 1\n"
    every = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="a.py",
        old_string="x = 1",
        new_string="x = 2",
        replace_all=True,
    )
    assert not every.is_error and "2 replacement" in every.content
    assert (tmp_path / "a.py").read_text() == "x = 2\nx = 2\n"


async def test_same_and_empty_old_string_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    editor = MemoryEditor()
    same = await invoke(tmp_path, editor, "edit_file", path="a.py", old_string="x", new_string="x")
    empty = await invoke(tmp_path, editor, "edit_file", path="a.py", old_string="", new_string="y")
    assert same.is_error and empty.is_error and editor.edits == []


async def test_crlf_file_keeps_its_line_endings(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    editor = MemoryEditor()
    result = await invoke(
        tmp_path, editor, "edit_file", path="w.txt", old_string="a\nb", new_string="a\nB"
    )
    assert not result.is_error, result.content
    assert (tmp_path / "w.txt").read_bytes() == b"a\r\nB\r\nc\r\n"


async def test_refused_edit_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    editor = MemoryEditor(refuse="the document changed")
    result = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="1", new_string="2"
    )
    assert result.is_error
    assert "refused" in result.content and "the document changed" in result.content
    assert "nothing was written" in result.content
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
    created = await invoke(tmp_path, editor, "write_file", path="new.py", content="y")
    assert created.is_error and not (tmp_path / "new.py").exists()


async def test_edit_applies_to_the_unsaved_buffer_with_its_version(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("on disk\n")
    editor = MemoryEditor()
    editor.buffers[path.resolve()] = DocumentSnapshot(
        path=path.resolve(), text="unsaved x\n", version=7
    )
    result = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="x", new_string="y"
    )
    assert not result.is_error
    edit = editor.edits[0]
    assert edit.version == 7 and edit.old_text == "unsaved x\n" and edit.new_text == "unsaved y\n"
    assert path.read_text() == "on disk\n"  # the editor applies it, not the tool


async def test_write_file_creates_and_overwrites(tmp_path: Path) -> None:
    editor = MemoryEditor()
    created = await invoke(tmp_path, editor, "write_file", path="pkg/new.py", content="a = 1\n")
    assert not created.is_error and "created" in created.content
    assert editor.edits[0].old_text is None
    assert (tmp_path / "pkg/new.py").read_text() == "a = 1\n"
    over = await invoke(tmp_path, editor, "write_file", path="pkg/new.py", content="a = 2\n")
    assert "overwrote" in over.content and editor.edits[1].old_text == "a = 1\n"


async def test_legacy_encoding_is_written_back_in_it(tmp_path: Path) -> None:
    (tmp_path / "g.txt").write_bytes(b"\xc4\xe3\xba\xc3\nx=1\n")  # GBK: 你好, x=1
    editor = MemoryEditor()
    result = await invoke(
        tmp_path, editor, "edit_file", path="g.txt", old_string="x=1", new_string="x=2"
    )
    assert not result.is_error, result.content
    assert (tmp_path / "g.txt").read_bytes() == b"\xc4\xe3\xba\xc3\nx=2\n"


async def test_undecodable_file_is_refused(tmp_path: Path) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"
    (tmp_path / "g.png").write_bytes(data)
    editor = MemoryEditor()
    result = await invoke(
        tmp_path, editor, "edit_file", path="g.png", old_string="IHDR", new_string="IHDX"
    )
    assert result.is_error
    assert result.content == (
        "g.png is not text Cadenza can edit safely: it does not look like text (it contains "
        "NUL bytes); it was not read or changed"
    )
    assert (tmp_path / "g.png").read_bytes() == data
    assert editor.edits == []
