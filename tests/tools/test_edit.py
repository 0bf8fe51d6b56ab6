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


async def test_trailing_whitespace_is_forgiven_when_unique(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():  \n    return 1\t\nx = 2\n")
    editor = MemoryEditor()
    result = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="a.py",
        old_string="def f():\n    return 1\n",
        new_string="def f():\n    return 3\n",
    )
    assert not result.is_error, result.content
    assert "only when trailing whitespace is ignored" in result.content
    assert (tmp_path / "a.py").read_text() == "def f():\n    return 3\nx = 2\n"


async def test_indentation_is_forgiven_and_new_string_reindented(tmp_path: Path) -> None:
    text = "class A:\n    def f(self):\n        if x:\n            return 1\n        return 2\n"
    (tmp_path / "a.py").write_text(text)
    editor = MemoryEditor()
    result = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="a.py",
        old_string="if x:\n    return 1\nreturn 2",
        new_string="if x:\n    return 10\n\nreturn 20",
    )
    assert not result.is_error, result.content
    assert "line 3 only when indentation is ignored, so new_string was re-indented" in (
        result.content
    )
    assert (tmp_path / "a.py").read_text() == (
        "class A:\n    def f(self):\n        if x:\n            return 10\n\n        return 20\n"
    )


async def test_loose_matches_keep_crlf_and_delete_whole_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"if a:\r\n    b = 1\r\n    c = 2\r\nd = 3\r\n")
    editor = MemoryEditor()
    result = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="b = 1\nc = 2", new_string=""
    )
    assert not result.is_error, result.content
    assert (tmp_path / "a.py").read_bytes() == b"if a:\r\nd = 3\r\n"
    again = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="  d = 3", new_string="d = 4  "
    )
    assert not again.is_error
    assert (tmp_path / "a.py").read_bytes() == b"if a:\r\nd = 4  \r\n"


async def test_ambiguous_loose_matches_and_uneven_shifts_stay_errors(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    x = 1\ndef g():\n        x = 1\n")
    editor = MemoryEditor()
    ambiguous = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string=" x = 1 ", new_string="x = 2"
    )
    assert ambiguous.is_error and "matches 2 places" in ambiguous.content
    uneven = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="a.py",
        old_string="def g():\n    x = 1",  # the file's body is 8 spaces in, the def 0
        new_string="def g():\n    x = 2",
    )
    assert uneven.is_error and "not found" in uneven.content
    partial = await invoke(
        tmp_path, editor, "edit_file", path="a.py", old_string="g():  ", new_string="h():"
    )
    assert partial.is_error  # partial lines are never matched loosely
    assert editor.edits == []


STUB = (
    "import re\n\n\ndef slugify(title):\n"
    '    """Turn a title into a URL slug.\n\n    Lowercase; runs of other characters become "-".\n'
    '    """\n    raise NotImplementedError\n\n\ndef other():\n    raise NotImplementedError\n'
)


async def test_lines_left_out_between_are_kept(tmp_path: Path) -> None:
    """The 1.5B model's stub edit: the def and the raise, without the docstring between."""
    (tmp_path / "text.py").write_text(STUB)
    editor = MemoryEditor()
    body = "    return re.sub('[^a-z0-9]+', '-', title.lower())"
    result = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="text.py",
        old_string="def slugify(title):\n    raise NotImplementedError",
        new_string=f"def slugify(title):\n{body}",
    )
    assert not result.is_error, result.content
    assert "matched lines 4-9 with lines it left out; those were kept" in result.content
    expected = STUB.replace('    """\n    raise NotImplementedError', f'    """\n{body}', 1)
    assert (tmp_path / "text.py").read_text() == expected


async def test_left_out_lines_new_string_holds_are_not_doubled(tmp_path: Path) -> None:
    (tmp_path / "text.py").write_text(STUB)
    editor = MemoryEditor()
    whole = (
        'def slugify(title):\n    """Turn a title into a URL slug.\n\n'
        '    Lowercase; runs of other characters become "-".\n    """\n    return title\n'
    )
    result = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="text.py",
        old_string="def slugify(title):\n    raise NotImplementedError\n",
        new_string=whole,
    )
    assert not result.is_error, result.content
    assert (tmp_path / "text.py").read_text().count("Turn a title") == 1
    assert "    return title\n" in (tmp_path / "text.py").read_text()


async def test_left_out_lines_stay_errors_where_their_place_is_a_guess(tmp_path: Path) -> None:
    (tmp_path / "text.py").write_text(STUB)
    editor = MemoryEditor()
    renamed = await invoke(  # the head changes: where would the docstring go?
        tmp_path,
        editor,
        "edit_file",
        path="text.py",
        old_string="def slugify(title):\n    raise NotImplementedError",
        new_string="def slug(title):\n    return title",
    )
    assert renamed.is_error and "not found" in renamed.content
    deleted = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="text.py",
        old_string="def slugify(title):\n    raise NotImplementedError",
        new_string="",
    )
    assert deleted.is_error
    far = "\n".join(["def f():", *(f"    x{i} = {i}" for i in range(25)), "    return 1", ""])
    (tmp_path / "far.py").write_text(far)
    too_far = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="far.py",
        old_string="def f():\n    return 1",
        new_string="def f():\n    return 2",
    )
    assert too_far.is_error
    (tmp_path / "two.py").write_text(
        "def f():\n    '''a'''\n    pass\ndef f():\n    '''b'''\n    pass\n"
    )
    twice = await invoke(
        tmp_path,
        editor,
        "edit_file",
        path="two.py",
        old_string="def f():\n    pass",
        new_string="def f():\n    return 1",
    )
    assert twice.is_error and "matches 2 places" in twice.content
    assert editor.edits == []


async def test_create_file_rewrites_a_small_file_sent_whole(tmp_path: Path) -> None:
    stub = 'def add(a, b):\n    """Add."""\n    raise NotImplementedError\n'
    (tmp_path / "calc.py").write_text(stub)
    editor = MemoryEditor()
    whole = 'def add(a, b):\n    """Add."""\n    return a + b\n'
    result = await invoke(tmp_path, editor, "create_file", path="calc.py", content=whole)
    assert not result.is_error, result.content
    assert result.content.startswith("calc.py existed, so its whole content was replaced")
    assert (tmp_path / "calc.py").read_text() == whole
    assert result.edits[0].kind == "change" and result.edits[0].old_text == stub
    same = await invoke(tmp_path, editor, "create_file", path="calc.py", content=whole)
    assert same.is_error and same.settled


async def test_create_file_refuses_a_fragment_or_a_big_file(tmp_path: Path) -> None:
    text = "import math\n\n\ndef square(x):\n    return x * x\n"
    (tmp_path / "m.py").write_text(text)
    editor = MemoryEditor()
    fragment = await invoke(
        tmp_path, editor, "create_file", path="m.py", content="def clamp(x):\n    return x\n"
    )
    assert fragment.is_error and "not its whole new text" in fragment.content
    big = "".join(f"x{i} = {i}\n" for i in range(1000))
    (tmp_path / "big.py").write_text(big)
    rewrite = await invoke(tmp_path, editor, "create_file", path="big.py", content=big + "y = 1\n")
    assert rewrite.is_error and editor.edits == []
    assert (tmp_path / "m.py").read_text() == text
