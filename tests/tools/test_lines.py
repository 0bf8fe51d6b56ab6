"""``replace_lines`` and numbered reads: the line-range edit style."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor


async def invoke(root: Path, name: str, numbered: bool = True, **arguments: object) -> ToolResult:
    prepared = prepare(
        ToolCall(id="1", name=name, arguments=json.dumps(arguments)), default_tools()
    )
    assert isinstance(prepared, PreparedCall), prepared
    ctx = ToolContext(root=root, host=MemoryEditor(), line_numbers=numbered)
    return await run(prepared, ctx)


async def test_read_file_numbers_lines_when_asked(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    numbered = await invoke(tmp_path, "read_file", path="a.py", offset=2)
    assert numbered.content == "a.py (lines 2-2 of 2)\n2| y = 2\n"
    plain = await invoke(tmp_path, "read_file", numbered=False, path="a.py")
    assert plain.content == "a.py (lines 1-2 of 2)\nx = 1\ny = 2\n"


@pytest.mark.parametrize(
    ("start", "end", "new_text", "expected"),
    [
        (2, 2, "B = 20", "a = 1\nB = 20\nc = 3\n"),  # replace one line
        (2, 3, "two\nthree\nfour\n", "a = 1\ntwo\nthree\nfour\n"),  # replace the end
        (2, 1, "inserted", "a = 1\ninserted\nb = 2\nc = 3\n"),  # insert before line 2
        (2, 2, "", "a = 1\nc = 3\n"),  # delete
        (4, 3, "d = 4", "a = 1\nb = 2\nc = 3\nd = 4\n"),  # append
    ],
)
async def test_replace_lines(
    tmp_path: Path, start: int, end: int, new_text: str, expected: str
) -> None:
    (tmp_path / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await invoke(
        tmp_path, "replace_lines", path="a.py", start_line=start, end_line=end, new_text=new_text
    )
    assert not result.is_error, result.content
    assert (tmp_path / "a.py").read_text() == expected


@pytest.mark.parametrize(
    ("start", "end", "new_text", "expected"),
    [
        (3, 2, "c", b"a\nb\nc\n"),  # append after a last line with no break: not glued on
        (2, 2, "B", b"a\nB"),  # replace the last line: the file still has no final break
        (1, 1, "x\x0cy", b"x\x0cy\nb"),  # a form feed is no line break
    ],
)
async def test_files_without_a_final_newline(
    tmp_path: Path, start: int, end: int, new_text: str, expected: bytes
) -> None:
    (tmp_path / "b.py").write_bytes(b"a\nb")
    result = await invoke(
        tmp_path, "replace_lines", path="b.py", start_line=start, end_line=end, new_text=new_text
    )
    assert not result.is_error, result.content
    assert (tmp_path / "b.py").read_bytes() == expected


async def test_numbers_count_only_lsp_line_breaks(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\x0cb\nc\n")
    numbered = await invoke(tmp_path, "read_file", path="f.txt")
    assert numbered.content == "f.txt (lines 1-2 of 2)\n1| a\x0cb\n2| c\n"


async def test_replace_lines_keeps_crlf(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"a\r\nb\r\n")
    await invoke(tmp_path, "replace_lines", path="a.py", start_line=1, end_line=1, new_text="A")
    assert (tmp_path / "a.py").read_bytes() == b"A\r\nb\r\n"


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [(9, 9, "past the end"), (2, 5, "end_line must be"), (3, 1, "end_line must be")],
)
async def test_bad_ranges_write_nothing(tmp_path: Path, start: int, end: int, message: str) -> None:
    (tmp_path / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await invoke(
        tmp_path, "replace_lines", path="a.py", start_line=start, end_line=end, new_text="x"
    )
    assert result.is_error and message in result.content
    assert (tmp_path / "a.py").read_text() == "a = 1\nb = 2\nc = 3\n"


async def test_replace_lines_stays_in_the_workspace(tmp_path: Path) -> None:
    result = await invoke(
        tmp_path, "replace_lines", path="../x.py", start_line=1, end_line=0, new_text="x"
    )
    assert result.is_error and not (tmp_path.parent / "x.py").exists()


@pytest.mark.parametrize(
    ("name", "old", "new", "broken"),
    [
        ("cli.py", "def main():\n    pass\n", "def if x:\n    pass\n", True),
        ("cli.py", "def main(:\n", "def main(x:\n", False),  # it did not parse before either
        ("cli.py", "x = 1\n", "x = 2\n", False),
        ("run.sh", "echo hi\n", "if then\n", True),
        ("a.js", "let a = 1;\n", "let a = ;\n", True),
        ("notes.txt", "a\n", "((\n", False),
    ],
)
def test_syntax_guard_checks(name: str, old: str, new: str, broken: bool) -> None:
    import shutil

    from cadenza.tools.syntax import breaks_syntax

    if name.endswith(".js") and shutil.which("node") is None:
        pytest.skip("node is not installed")
    assert (breaks_syntax(Path(name), old, new) is not None) == broken


async def test_a_guarded_edit_that_breaks_syntax_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "cli.py").write_text("def main():\n    return 0\n\n\nmain()\n")
    args = {"path": "cli.py", "old_string": "main()", "new_string": "if x:\n    main()"}
    prepared = prepare(
        ToolCall(id="1", name="edit_file", arguments=json.dumps({**args, "replace_all": True})),
        default_tools(),
    )
    assert isinstance(prepared, PreparedCall)
    guarded = ToolContext(root=tmp_path, host=MemoryEditor(), syntax_guard=True)
    result = await run(prepared, guarded)
    assert result.is_error and "invalid (line 1" in result.content
    assert (tmp_path / "cli.py").read_text() == "def main():\n    return 0\n\n\nmain()\n"
    unguarded = await run(prepared, ToolContext(root=tmp_path, host=MemoryEditor()))
    assert not unguarded.is_error  # off by default (hosted models' loop)


@pytest.mark.parametrize("name", ["replace_lines", "edit_file"])
async def test_a_line_shown_redacted_is_not_written_back_over_the_secret(
    tmp_path: Path, name: str
) -> None:
    text = 'def connect():\n    password = "hunter22x"\n    return open_db(password)\n'
    (tmp_path / "db.py").write_text(text)
    shown = await invoke(tmp_path, "read_file", path="db.py")
    assert '2|     password = "[redacted]"' in shown.content
    # The model copies the lines it read and changes the one around them.
    copied = 'def connect(timeout):\n    password = "[redacted]"\n    return open_db(password)\n'
    if name == "replace_lines":
        args: dict[str, object] = {"start_line": 1, "end_line": 3, "new_text": copied}
    else:
        args = {"old_string": "def connect():\n", "new_string": copied.split("    return")[0]}
    result = await invoke(tmp_path, name, path="db.py", **args)
    assert result.is_error, result.content
    assert "hidden" in result.content and "nothing was written" in result.content
    assert (tmp_path / "db.py").read_text() == text
    # Changing only the lines around it goes through, the secret kept.
    if name == "replace_lines":
        args = {"start_line": 1, "end_line": 1, "new_text": "def connect(timeout):"}
    else:
        args = {"old_string": "def connect():", "new_string": "def connect(timeout):"}
    result = await invoke(tmp_path, name, path="db.py", **args)
    assert not result.is_error, result.content
    assert (tmp_path / "db.py").read_text() == text.replace("connect()", "connect(timeout)")
