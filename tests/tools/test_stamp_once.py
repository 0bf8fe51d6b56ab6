"""A read call probes once: the stuck detector, the cache lookup and the tool share the stamp."""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path

import pytest

from cadenza.messages import ToolCall
from cadenza.tools import read
from cadenza.tools.base import ToolContext
from cadenza.tools.dispatch.cache import ReadCache
from cadenza.tools.dispatch.execution import PreparedCall, run, stamped
from cadenza.tools.read import ReadFile, ReadFileArgs
from tests.doubles import MemoryEditor


def _probes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = read._path_state

    def counting(ctx: ToolContext, name: str, *, contents: bool | None) -> Hashable:
        seen.append(name)
        return original(ctx, name, contents=contents)

    monkeypatch.setattr(read, "_path_state", counting)
    return seen


def _call(path: str) -> PreparedCall:
    call = ToolCall(id="c1", name="read_file", arguments=json.dumps({"path": path}))
    return PreparedCall(call=call, tool=ReadFile(), args=ReadFileArgs(path=path))


async def test_one_probe_per_call_and_a_change_still_misses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s1")
    cache = ReadCache()
    probes = _probes(monkeypatch)

    first = await stamped(_call("a.txt"), ctx)
    assert first.stamp is not None
    assert cache.lookup(first).outcome == "miss"
    result = await run(first, ctx)
    assert "one" in result.content
    assert result.stamp is not None and result.stamp.state == first.stamp.state
    cache.store(first, result)
    assert len(probes) == 1  # before: one for the stuck detector, one in the tool

    again = await stamped(_call("a.txt"), ctx)
    hit = cache.lookup(again)
    assert hit.hit and hit.result is not None and "one" in hit.result.content
    assert len(probes) == 2  # before: three (detector, lookup's fresh(), nothing else)

    (tmp_path / "a.txt").write_text("two\n")  # racy: same second, content hashed
    changed = await stamped(_call("a.txt"), ctx)
    assert cache.lookup(changed).outcome == "miss"
    assert "two" in (await run(changed, ctx)).content
    assert len(probes) == 3


async def test_a_call_without_a_stamp_still_probes_for_itself(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    ctx = ToolContext(root=tmp_path, host=MemoryEditor(), session_id="s1")
    cache = ReadCache()
    plain = _call("a.txt")  # not stamped: lookup probes, the tool takes its own stamp
    result = await run(plain, ctx)
    assert result.stamp is not None
    cache.store(plain, result)
    assert cache.lookup(plain).hit
    (tmp_path / "a.txt").write_text("changed\n")
    assert cache.lookup(plain).outcome == "miss"
