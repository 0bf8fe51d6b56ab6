"""Bounded reads, listing and search."""

from __future__ import annotations

import json
from pathlib import Path

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.read import MAX_READ_CHARS
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor


async def invoke(root: Path, name: str, **args: object) -> ToolResult:
    prepared = prepare(ToolCall(id="1", name=name, arguments=json.dumps(args)), default_tools())
    assert isinstance(prepared, PreparedCall), prepared
    return await run(prepared, ToolContext(root=root, host=MemoryEditor()))


async def test_huge_single_line_json_is_bounded(tmp_path: Path) -> None:
    """A 5 MB single-line file gives a bounded read with a note, not an overflow."""
    (tmp_path / "data.json").write_text(json.dumps({"k": "v" * 5_000_000}))
    result = await invoke(tmp_path, "read_file", path="data.json")
    assert not result.is_error
    assert len(result.content) < MAX_READ_CHARS
    assert "line cut at" in result.content


async def test_many_lines_truncate_with_offset_note(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i} " + "x" * 100 + "\n" for i in range(5000)))
    first = await invoke(tmp_path, "read_file", path="big.txt")
    assert "[truncated:" in first.content and "offset=" in first.content
    assert len(first.content) <= MAX_READ_CHARS + 200
    offset = int(first.content.rsplit("offset=", 1)[1].rstrip("]"))
    second = await invoke(tmp_path, "read_file", path="big.txt", offset=offset, limit=1)
    assert f"line {offset - 1} " in second.content


async def test_read_missing_and_past_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    missing = await invoke(tmp_path, "read_file", path="nope.txt")
    assert missing.is_error and "not found" in missing.content
    past = await invoke(tmp_path, "read_file", path="a.txt", offset=5)
    assert past.is_error and "past the end" in past.content


async def test_list_and_search(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.py").write_text("def calc():\n    pass\n")
    (tmp_path / "b.md").write_text("calc here\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git/config").write_text("calc\n")
    listed = await invoke(tmp_path, "list_files")
    assert listed.content.splitlines() == ["b.md", "src/a.py"]
    only_py = await invoke(tmp_path, "list_files", glob="*.py")
    assert only_py.content.splitlines() == ["src/a.py"]
    found = await invoke(tmp_path, "search", pattern=r"calc\b")
    assert found.content.splitlines()[0] == "2 matches in 2 files: b.md, src/a.py"
    assert "  1: def calc():" in found.content
    literal = await invoke(tmp_path, "search", pattern="calc(")  # not a regex: searched as text
    assert (
        not literal.is_error
        and literal.content == "1 matches in 1 files: src/a.py\nsrc/a.py\n  1: def calc():"
    )
    (tmp_path / "s.py").write_text("last = values[len(values) - 1]\n")
    code = await invoke(tmp_path, "search", pattern="len(values) - 1")  # valid regex, no match
    assert "s.py" in code.content and "  1: last = values" in code.content
    deep = await invoke(tmp_path, "list_files", glob="**/*.py")
    assert deep.content.splitlines() == ["s.py", "src/a.py"]
