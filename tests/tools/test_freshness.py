"""Freshness stamps, and the read cache's use of them: no cached read outlives a change.

The changes here are made behind the cache's back, as a command, another process or the
person typing would make them: nothing calls ``invalidate_*``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cadenza.messages import ToolCall
from cadenza.tools import freshness
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.cache import ReadCache
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.freshness import ReadStamp, disk_state, file_state, tree_state
from cadenza.tools.host import DocumentSnapshot
from cadenza.tools.read import SKIP_DIRS, ListFiles, ReadFile, Search
from cadenza.tools.registry import ToolRegistry
from tests.doubles import MemoryEditor

REGISTRY = ToolRegistry([ReadFile(), ListFiles(), Search()])


def prep(name: str, **args: Any) -> PreparedCall:
    prepared = prepare(ToolCall(id="c1", name=name, arguments=json.dumps(args)), REGISTRY)
    assert isinstance(prepared, PreparedCall), prepared
    return prepared


class Routed:
    """The session's cache routing around the real tools (lookup, else run and store)."""

    def __init__(self, root: Path, editor: MemoryEditor | None = None) -> None:
        self.editor = editor or MemoryEditor()
        self.ctx = ToolContext(root=root, host=self.editor)
        self.cache = ReadCache()
        self.outcomes: list[str] = []

    async def __call__(self, name: str, **args: Any) -> ToolResult:
        prepared = prep(name, **args)
        lookup = self.cache.lookup(prepared)
        self.outcomes.append(lookup.outcome)
        if lookup.result is not None:
            return lookup.result
        result = await run(prepared, self.ctx)
        self.cache.store(prepared, result)
        return result


def rewrite_keeping_mtime(path: Path, text: str) -> None:
    """Change a file's bytes, same size, and put its mtime back (``cp -p``, a coarse clock)."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


async def test_list_files_sees_a_file_a_command_created(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    routed = Routed(tmp_path)
    assert (await routed("list_files")).content == "a.txt"
    assert (await routed("list_files")).content == "a.txt"
    (tmp_path / "b.txt").touch()  # run_command "touch b.txt"
    assert (await routed("list_files")).content == "a.txt\nb.txt"
    assert routed.outcomes == ["miss", "hit", "miss"]


async def test_list_files_sees_a_file_created_in_a_subfolder(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    (tmp_path / "pkg" / "deep" / "a.py").write_text("")
    routed = Routed(tmp_path)
    await routed("list_files")
    (tmp_path / "pkg" / "deep" / "b.py").write_text("")
    assert "pkg/deep/b.py" in (await routed("list_files")).content
    (tmp_path / "pkg" / "deep" / "a.py").unlink()
    assert "pkg/deep/a.py" not in (await routed("list_files")).content
    assert routed.outcomes == ["miss", "miss", "miss"]


async def test_list_files_ignores_skipped_folders_and_file_contents(tmp_path: Path) -> None:
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    routed = Routed(tmp_path)
    await routed("list_files")
    (tmp_path / "node_modules" / "dep.js").write_text("")
    (tmp_path / "a.py").write_text("x = 2 and more\n")
    await routed("list_files")
    assert routed.outcomes == ["miss", "hit"]


async def test_search_sees_a_file_changed_on_disk(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("needle = 1\n")
    routed = Routed(tmp_path)
    assert "1 matches" in (await routed("search", pattern="needle")).content
    assert "1 matches" in (await routed("search", pattern="needle")).content
    (tmp_path / "b.py").write_text("needle = 2\n")
    assert "2 matches" in (await routed("search", pattern="needle")).content
    rewrite_keeping_mtime(tmp_path / "a.py", "noodle = 1\n")
    assert "1 matches" in (await routed("search", pattern="needle")).content
    assert routed.outcomes == ["miss", "hit", "miss", "miss"]


async def test_search_sees_the_person_typing_in_an_open_buffer(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    editor = MemoryEditor()
    editor.buffers[path] = DocumentSnapshot(path=path, text="needle\n", version=1)
    routed = Routed(tmp_path, editor)
    assert "1 matches" in (await routed("search", pattern="needle")).content
    editor.buffers[path] = DocumentSnapshot(path=path, text="gone\n", version=2)
    assert (await routed("search", pattern="needle")).content == "no matches"
    assert routed.outcomes == ["miss", "miss"]


async def test_read_file_sees_the_person_typing_in_an_open_buffer(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("on disk\n")
    editor = MemoryEditor()
    editor.buffers[path] = DocumentSnapshot(path=path, text="typed 1\n", version=1)
    routed = Routed(tmp_path, editor)
    assert "typed 1" in (await routed("read_file", path="a.py")).content
    assert "typed 1" in (await routed("read_file", path="a.py")).content
    editor.buffers[path] = DocumentSnapshot(path=path, text="typed 2\n", version=2)
    assert "typed 2" in (await routed("read_file", path="a.py")).content
    del editor.buffers[path]  # closed without saving: the disk again
    assert "on disk" in (await routed("read_file", path="a.py")).content
    assert routed.outcomes == ["miss", "hit", "miss", "miss"]


async def test_read_file_sees_another_process_rewrite_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("before\n")
    routed = Routed(tmp_path)
    await routed("read_file", path="a.py")
    rewrite_keeping_mtime(path, "after!\n")
    assert "after!" in (await routed("read_file", path="a.py")).content
    replacement = tmp_path / "a.py.tmp"  # an atomic save: a new inode under the old name
    replacement.write_text("saved\n")
    replacement.replace(path)
    assert "saved" in (await routed("read_file", path="a.py")).content
    path.unlink()
    assert (await routed("read_file", path="a.py")).is_error
    assert routed.outcomes == ["miss", "miss", "miss", "miss"]


def test_a_racy_file_is_known_by_its_content(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("one\n")
    first = disk_state(path)
    assert isinstance(first, tuple) and len(first) == 7  # stat fields and the content hash
    assert disk_state(path) == first
    stat = path.stat()
    later = stat.st_mtime_ns + 10 * freshness.RACY_NS
    old = disk_state(path, now_ns=later)
    assert isinstance(old, tuple) and len(old) == 6  # long unchanged: the stat is enough
    assert disk_state(path, now_ns=later) == old


def test_a_racy_file_too_large_to_hash_is_never_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(freshness, "MAX_HASH_BYTES", 4)
    path = tmp_path / "big.txt"
    path.write_text("more than four bytes\n")
    stamp = ReadStamp.take(lambda: disk_state(path))
    assert not stamp.fresh()
    editor = MemoryEditor()
    folder = ReadStamp.take(lambda: tree_state(editor, tmp_path, skip=SKIP_DIRS, contents=True))
    assert not folder.fresh()
    names = ReadStamp.take(lambda: tree_state(editor, tmp_path, skip=SKIP_DIRS, contents=False))
    assert names.fresh()


def test_file_state_prefers_the_open_buffer(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    editor = MemoryEditor()
    assert file_state(editor, path) == ("missing",)
    editor.buffers[path] = DocumentSnapshot(path=path, text="x", version=3)
    assert file_state(editor, path) == ("buffer", 3, 1, hash("x"))


def test_tree_state_notes_symlink_targets_without_following_folders(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    editor = MemoryEditor()

    def state() -> object:
        return tree_state(editor, tmp_path, skip=SKIP_DIRS, contents=False)

    before = state()
    (tmp_path / "real" / "inside.py").write_text("")  # also reachable through the link
    after_inside = state()
    assert after_inside != before  # seen through real/
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "other", target_is_directory=True)
    assert state() != after_inside


def test_a_missing_folder_has_a_state_that_changes_when_it_appears(tmp_path: Path) -> None:
    editor = MemoryEditor()
    stamp = ReadStamp.take(
        lambda: tree_state(editor, tmp_path / "new", skip=SKIP_DIRS, contents=False)
    )
    assert stamp.fresh()
    (tmp_path / "new").mkdir()
    assert not stamp.fresh()


async def test_results_of_read_tools_carry_a_stamp_and_others_do_not(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    ctx = ToolContext(root=tmp_path, host=MemoryEditor())
    for name, args in (
        ("read_file", {"path": "a.py"}),
        ("list_files", {}),
        ("search", {"pattern": "x"}),
        ("search", {"pattern": "x", "path": "a.py"}),
    ):
        result = await run(prep(name, **args), ctx)
        assert result.stamp is not None and result.stamp.fresh(), name
    assert ToolResult(content="x").stamp is None
    assert ToolResult(content="x") == ToolResult(content="x", stamp=ReadStamp.take(lambda: 1))
