"""Priming on a hostile workspace: a module nested past the parser's depth and a link that leads
out of the workspace neither stop a session from starting nor get read."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.engine.prime import task_files
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import LOCAL_LOOP
from tests.doubles import MemoryEditor, ScriptedProvider, reply

TEXT = LOCAL_LOOP.replace(edit="text", ending="empty", checks="off", candidates=0)

DEEP = {
    "unary.py": "import prices\nx = " + "-" * 200_000 + "1\n",  # the parser overflows
    "sums.py": "import prices\nx = " + "1+" * 200_000 + "1\n",  # so does building the tree
    "parens.py": "import prices\nx = " + "(" * 100_000 + "\n",  # past the nesting limit
    "nul.py": "import prices\nx = '\x00'\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
async def test_a_module_nested_past_the_parser_does_not_stop_the_session(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path.resolve()
    (root / name).write_text(DEEP[name], encoding="utf-8")
    (root / "prices.py").write_text("PRICE = 1\n", encoding="utf-8")
    assert task_files(root, f"fix {name}", by_code_name=True) == [name]
    editor = MemoryEditor()
    session = Session(
        session_id="s1",
        task=f"fix {name}",
        root=root,
        provider=ScriptedProvider([reply(content="Looked.")]),
        editor=editor,
        settings=SessionSettings(loop=TEXT, max_steps=2),
    )  # type: ignore[arg-type]
    assert (await session.run()).stop_reason == "end_turn"


def test_a_link_out_of_the_workspace_is_not_read_by_the_scans(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("import prices\nTOKEN = calc_total()\n", encoding="utf-8")
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "prices.py").write_text("PRICE = 1\n", encoding="utf-8")
    (root / "linked.py").symlink_to(outside / "secret.py")
    (root / "tests" / "test_linked.py").symlink_to(outside / "secret.py")
    (root / "inside.py").write_text("def calc_total():\n    return 1\n", encoding="utf-8")
    # The names a task holds are looked for in the workspace's own files only.
    assert task_files(root, "rename calc_total", by_code_name=True) == ["inside.py"]
    # A named file that is a link out is not read for its imports (prices.py would follow).
    found = task_files(root, "fix tests/test_linked.py", by_code_name=True)
    assert found == ["tests/test_linked.py"]
    # A link inside the workspace is followed as the tools follow it.
    (root / "tests" / "test_linked.py").unlink()
    (root / "tests" / "test_linked.py").symlink_to(root / "linked.py")
    (root / "linked.py").unlink()
    (root / "linked.py").write_text("import prices\n", encoding="utf-8")
    assert task_files(root, "fix tests/test_linked.py", by_code_name=True) == [
        "tests/test_linked.py",
        "prices.py",
    ]
