"""The workspace overview of the first message."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.overview import workspace_overview
from cadenza.tools.base import ToolContext
from cadenza.tools.read import ListFiles, ListFilesArgs, Search, SearchArgs
from tests.doubles import MemoryEditor


def test_a_name_with_control_characters_is_one_escaped_line(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("")
    (tmp_path / "evil\nsecrets.py\x1b[31m.py").write_text("")
    lines = workspace_overview(tmp_path).splitlines()
    assert lines == ["app.py", "evil\\nsecrets.py\\x1b[31m.py"]


async def test_list_files_and_search_list_such_a_name_on_one_line(tmp_path: Path) -> None:
    (tmp_path / "evil\nsecrets.py").write_text("needle\n")
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s1")
    listed = await ListFiles().invoke(ListFilesArgs(), ctx)
    assert listed.content.splitlines() == ["evil\\nsecrets.py"]
    found = await Search().invoke(SearchArgs(pattern="needle"), ctx)
    assert "evil\\nsecrets.py" in found.content and "evil\nsecrets" not in found.content
