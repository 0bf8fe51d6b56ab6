"""The workspace overview of the first message."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.overview import workspace_overview


def test_a_name_with_control_characters_is_one_escaped_line(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("")
    (tmp_path / "evil\nsecrets.py\x1b[31m.py").write_text("")
    lines = workspace_overview(tmp_path).splitlines()
    assert lines == ["app.py", "evil\\nsecrets.py\\x1b[31m.py"]
