"""Cache routing: read-only results by normalized arguments, invalidated by edits and commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cadenza.messages import ToolCall
from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from cadenza.tools.dispatch.cache import ReadCache, cache_key
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.edit import WriteFile
from cadenza.tools.read import ListFiles, ReadFile, Search
from cadenza.tools.registry import ToolRegistry
from tests.doubles import MemoryEditor


class _PatternArgs(ToolArgs):
    pattern: str


class _Everywhere(Tool[_PatternArgs]):
    """A read-only tool without a ``path`` argument: its scope is the whole workspace."""

    name = "grep_all"
    description = "test tool"
    args_model = _PatternArgs
    read_only: ClassVar[bool] = True

    async def invoke(self, args: _PatternArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(content="x")


REGISTRY = ToolRegistry([ReadFile(), ListFiles(), Search(), WriteFile(), _Everywhere()])


def prep(name: str, _id: str = "c1", **args: Any) -> PreparedCall:
    prepared = prepare(ToolCall(id=_id, name=name, arguments=json.dumps(args)), REGISTRY)
    assert isinstance(prepared, PreparedCall), prepared
    return prepared


def filled(cache: ReadCache, *calls: PreparedCall) -> None:
    for prepared in calls:
        assert cache.store(prepared, ToolResult(content=f"result of {cache_key(prepared)}"))


def test_miss_then_store_then_hit_returns_the_stored_result() -> None:
    cache = ReadCache()
    call = prep("read_file", path="a.py")
    first = cache.lookup(call)
    assert first.outcome == "miss" and not first.hit and first.result is None
    result = ToolResult(content="a.py (lines 1-1 of 1)\nx = 1\n")
    assert cache.store(call, result) is True
    second = cache.lookup(prep("read_file", _id="c2", path="a.py"))
    assert second.hit and second.outcome == "hit"
    assert second.result is result
    assert second.key == first.key


def test_key_is_normalized_defaults_and_argument_order() -> None:
    plain = prep("read_file", path="a.py")
    explicit = prepare(
        ToolCall(
            id="c2", name="read_file", arguments='{"limit": 400, "path": "a.py", "offset": 1}'
        ),
        REGISTRY,
    )
    assert isinstance(explicit, PreparedCall)
    assert cache_key(plain) == cache_key(explicit)
    assert cache_key(plain) == (
        '{"args":{"limit":400,"offset":1,"path":"a.py"},"tool":"read_file"}'
    )
    assert cache_key(plain) != cache_key(prep("read_file", path="a.py", offset=2))
    assert cache_key(plain) != cache_key(prep("search", pattern="a.py", path="a.py"))


def test_different_arguments_miss() -> None:
    cache = ReadCache()
    filled(cache, prep("read_file", path="a.py"))
    assert cache.lookup(prep("read_file", path="b.py")).outcome == "miss"
    assert cache.lookup(prep("read_file", path="a.py", limit=10)).outcome == "miss"


def test_non_read_only_tools_bypass_and_are_never_stored() -> None:
    cache = ReadCache()
    edit = prep("write_file", path="a.py", content="x")
    lookup = cache.lookup(edit)
    assert lookup.outcome == "bypass" and not lookup.hit and lookup.result is None
    assert lookup.key.startswith('{"args":')
    assert cache.store(edit, ToolResult(content="wrote a.py")) is False
    assert len(cache) == 0
    assert cache.lookup(edit).outcome == "bypass"


def test_error_results_are_never_stored() -> None:
    cache = ReadCache()
    call = prep("read_file", path="missing.py")
    assert cache.store(call, ToolResult(content="no such file", is_error=True)) is False
    assert cache.lookup(call).outcome == "miss"
    assert len(cache) == 0


def _entries(cache: ReadCache, *calls: PreparedCall) -> list[str]:
    return [cache.lookup(c).outcome for c in calls]


def test_edit_of_a_file_drops_its_reads_and_the_folders_containing_it(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    read_a = prep("read_file", path="src/a.py")
    read_b = prep("read_file", path="src/b.py")
    list_root = prep("list_files")
    list_src = prep("list_files", path="src")
    list_docs = prep("list_files", path="./docs")
    search_src = prep("search", pattern="x", path="src")
    search_a = prep("search", pattern="x", path="src/a.py")
    search_docs = prep("search", pattern="x", path="docs")
    cache = ReadCache()
    calls = (read_a, read_b, list_root, list_src, list_docs, search_src, search_a, search_docs)
    filled(cache, *calls)

    dropped = cache.invalidate_paths([tmp_path / "src" / "a.py"], tmp_path)

    assert dropped == 5
    assert _entries(cache, *calls) == [
        "miss",  # read src/a.py
        "hit",  # read src/b.py
        "miss",  # list .
        "miss",  # list src
        "hit",  # list docs
        "miss",  # search src
        "miss",  # search src/a.py
        "hit",  # search docs
    ]


def test_relative_changed_paths_resolve_against_the_root(tmp_path: Path) -> None:
    cache = ReadCache()
    filled(cache, prep("read_file", path="a.py"), prep("read_file", path="b.py"))
    assert cache.invalidate_paths([Path("a.py")], tmp_path) == 1
    assert _entries(cache, prep("read_file", path="a.py"), prep("read_file", path="b.py")) == [
        "miss",
        "hit",
    ]


def test_deleting_a_folder_drops_reads_inside_it(tmp_path: Path) -> None:
    cache = ReadCache()
    inside = prep("read_file", path="pkg/mod/x.py")
    outside = prep("read_file", path="pkg2/x.py")
    filled(cache, inside, outside)
    cache.invalidate_paths([tmp_path / "pkg"], tmp_path)
    assert _entries(cache, inside, outside) == ["miss", "hit"]


def test_entries_whose_path_cannot_be_resolved_are_dropped(tmp_path: Path) -> None:
    cache = ReadCache()
    escaping = prep("read_file", path="../outside.txt")
    kept = prep("read_file", path="kept.py")
    filled(cache, escaping, kept)
    assert cache.invalidate_paths([tmp_path / "unrelated.py"], tmp_path) == 1
    assert _entries(cache, escaping, kept) == ["miss", "hit"]


def test_read_only_tool_without_path_is_dropped_by_any_edit(tmp_path: Path) -> None:
    cache = ReadCache()
    everywhere = prep("grep_all", pattern="x")
    filled(cache, everywhere)
    assert cache.invalidate_paths([tmp_path / "any.py"], tmp_path) == 1
    assert cache.lookup(everywhere).outcome == "miss"


def test_no_changed_paths_drop_nothing(tmp_path: Path) -> None:
    cache = ReadCache()
    filled(cache, prep("grep_all", pattern="x"))
    assert cache.invalidate_paths([], tmp_path) == 0
    assert len(cache) == 1


def test_listing_through_a_symlinked_folder_is_dropped_by_an_edit_of_its_target(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "src", target_is_directory=True)
    cache = ReadCache()
    via_link = prep("list_files", path="link")
    filled(cache, via_link)
    cache.invalidate_paths([tmp_path / "src" / "new.py"], tmp_path)
    assert cache.lookup(via_link).outcome == "miss"


def test_invalidate_all_after_a_command() -> None:
    cache = ReadCache()
    filled(cache, prep("read_file", path="a.py"), prep("list_files"))
    assert cache.invalidate_all() == 2
    assert len(cache) == 0
    assert cache.lookup(prep("list_files")).outcome == "miss"


def test_oldest_entry_is_evicted_and_a_hit_refreshes_it() -> None:
    cache = ReadCache(max_entries=2)
    a, b, c = (prep("read_file", path=f"{n}.py") for n in "abc")
    filled(cache, a, b)
    assert cache.lookup(a).hit  # a is now the most recent
    filled(cache, c)
    assert len(cache) == 2
    assert _entries(cache, a, b, c) == ["hit", "miss", "hit"]


def test_max_entries_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ReadCache(max_entries=0)


async def test_read_edit_read_through_the_real_tools_sees_the_new_text(tmp_path: Path) -> None:
    """Session routing: a hit answers a repeat, a change misses, an edit invalidates."""
    (tmp_path / "app.py").write_text("x = 1\n")
    ctx = ToolContext(root=tmp_path, host=MemoryEditor())
    cache = ReadCache()

    async def routed(prepared: PreparedCall) -> ToolResult:
        lookup = cache.lookup(prepared)
        if lookup.result is not None:
            return lookup.result
        result = await run(prepared, ctx)
        if result.edits:
            cache.invalidate_paths([e.path for e in result.edits], tmp_path)
        cache.store(prepared, result)
        return result

    first = await routed(prep("read_file", path="app.py"))
    assert "x = 1" in first.content
    assert await routed(prep("read_file", path="app.py")) is first
    (tmp_path / "app.py").write_text("changed behind the cache\n")  # stamps see it
    assert "behind" in (await routed(prep("read_file", path="app.py"))).content

    edit = await routed(prep("write_file", path="app.py", content="x = 2\n"))
    assert not edit.is_error and edit.edits
    again = await routed(prep("read_file", path="app.py"))
    assert "x = 2" in again.content
