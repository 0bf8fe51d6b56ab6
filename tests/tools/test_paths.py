"""Path safety: no tool reads or writes outside the workspace root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolError
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.paths import resolve_in_workspace
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    (root / "inside.txt").write_text("fine\n")
    os.symlink(outside / "secret.txt", root / "link.txt")
    os.symlink(outside, root / "linkdir")
    return root, outside


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "link.txt",
        "linkdir/secret.txt",
        "linkdir/new.txt",
    ],
)
def test_escapes_are_refused(layout: tuple[Path, Path], path: str) -> None:
    root, _ = layout
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(root, path)


def test_absolute_path_elsewhere_refused_inside_allowed(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    with pytest.raises(ToolError):
        resolve_in_workspace(root, str(outside / "secret.txt"))
    with pytest.raises(ToolError):
        resolve_in_workspace(root, "/etc/passwd")
    assert resolve_in_workspace(root, str(root / "inside.txt")) == (root / "inside.txt").resolve()


def test_nul_and_empty(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(ToolError, match="NUL"):
        resolve_in_workspace(root, "a\x00b")
    assert resolve_in_workspace(root, "") == root.resolve()


@pytest.mark.parametrize("path", ["~", "~/pwn.txt", "~\\x"])
def test_a_home_path_is_refused_not_made_a_folder_named_tilde(
    layout: tuple[Path, Path], path: str
) -> None:
    root, _ = layout
    with pytest.raises(ToolError, match="not expanded"):
        resolve_in_workspace(root, path)
    assert not (root / "~").exists()
    assert resolve_in_workspace(root, "a~b") == root.resolve() / "a~b"  # only a leading ~


async def run_tool(root: Path, name: str, arguments: str) -> tuple[bool, str]:
    prepared = prepare(ToolCall(id="1", name=name, arguments=arguments), default_tools())
    assert isinstance(prepared, PreparedCall), prepared
    result = await run(prepared, ToolContext(root=root, host=MemoryEditor()))
    return result.is_error, result.content


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", '{"path": "../outside/secret.txt"}'),
        ("read_file", '{"path": "link.txt"}'),
        ("write_file", '{"path": "../outside/new.txt", "content": "x"}'),
        ("write_file", '{"path": "linkdir/new.txt", "content": "x"}'),
        ("edit_file", '{"path": "link.txt", "old_string": "TOP", "new_string": "NOT"}'),
        ("list_files", '{"path": ".."}'),
        ("search", '{"pattern": "SECRET", "path": "../outside"}'),
    ],
)
async def test_tools_refuse_escapes_and_write_nothing(
    layout: tuple[Path, Path], name: str, arguments: str
) -> None:
    root, outside = layout
    is_error, content = await run_tool(root, name, arguments)
    assert is_error
    assert "outside the workspace" in content
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOP SECRET\n"


async def test_search_and_list_skip_symlinks_out(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    is_error, content = await run_tool(root, "search", '{"pattern": "SECRET"}')
    assert not is_error and content == "no matches"
    is_error, content = await run_tool(root, "list_files", "{}")
    assert content.splitlines() == ["inside.txt"]


async def test_delete_and_rename_of_a_link_leave_its_target(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    (root / "a.py").write_text("keep me\n")
    os.symlink(root / "a.py", root / "inlink")
    for name, arguments in [
        ("delete_file", '{"path": "inlink"}'),
        ("rename_file", '{"path": "inlink", "new_path": "b.py"}'),
    ]:
        is_error, content = await run_tool(root, name, arguments)
        assert is_error and "symbolic link" in content
    assert (root / "a.py").read_text() == "keep me\n" and (root / "inlink").is_symlink()
    assert not (root / "b.py").exists()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write_file", '{"path": ".git/hooks/post-checkout", "content": "#!/bin/sh\\nevil"}'),
        ("edit_file", '{"path": ".git/config", "old_string": "a", "new_string": "b"}'),
        ("create_file", '{"path": "sub/.git/x", "content": "x"}'),
    ],
)
async def test_version_control_folders_are_never_changed(
    layout: tuple[Path, Path], name: str, arguments: str
) -> None:
    root, _ = layout
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("a\n")
    is_error, content = await run_tool(root, name, arguments)
    assert is_error and "version-control folder" in content
    assert (root / ".git" / "config").read_text() == "a\n"
    assert not (root / ".git" / "hooks" / "post-checkout").exists()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write_file", {"path": "new\x1b]0;PWNED\x07\n.py", "content": "x"}),
        ("create_file", {"path": "dir\x9b/a.py", "content": "x"}),  # a C1 folder name
        ("create_file", {"path": "del\x7f.py", "content": "x"}),
        ("rename_file", {"path": "inside.txt", "new_path": "moved\r.txt"}),
        ("write_file", {"path": "bidi\u202etxt.py", "content": "x"}),  # shown as "bidiyp.txt"
        ("create_file", {"path": "iso\u2066.py", "content": "x"}),
    ],
)
async def test_names_with_control_characters_are_not_created(
    layout: tuple[Path, Path], name: str, arguments: dict[str, str]
) -> None:
    root, _ = layout
    before = sorted(os.listdir(root))
    is_error, content = await run_tool(root, name, json.dumps(arguments))
    assert is_error, content
    assert "file names with control characters are not created" in content
    assert sorted(os.listdir(root)) == before


async def test_an_existing_file_with_a_control_character_is_read_and_edited(
    layout: tuple[Path, Path],
) -> None:
    root, _ = layout
    (root / "odd\x1b.txt").write_text("one\n")
    is_error, content = await run_tool(root, "read_file", json.dumps({"path": "odd\x1b.txt"}))
    assert not is_error and "one" in content
    edit = {"path": "odd\x1b.txt", "old_string": "one", "new_string": "two"}
    is_error, content = await run_tool(root, "edit_file", json.dumps(edit))
    assert not is_error, content
    assert (root / "odd\x1b.txt").read_text() == "two\n"
