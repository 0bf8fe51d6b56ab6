"""Every workspace tool on hostile files: a plain error, never a hang, a crash or a huge read.

A workspace may hold a FIFO (reading it waits for a writer forever), a sparse file of 3 GiB, a
symbolic link loop. Each tool meets each of them through the dispatcher, as the loop runs
calls (the read stamp taken first, in a worker thread, then the call): the answer is a result
the model can read, quickly, with no Python exception text in it; and a whole session that
meets them ends normally (its only edit failed: ``failed``, in plain words, not an error).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from cadenza.engine.session import Session
from cadenza.messages import ToolCall, ToolMessage, UserMessage
from cadenza.tools import pattern
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run, stamped
from cadenza.tools.read import MAX_SEARCH_FILE_BYTES
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply
from tests.support.deep_tree import deep_folder

GIB = 1 << 30
INTERNALS = ("Traceback", "RuntimeError", "OSError", "Errno", "FileReadError", " failed: ")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A workspace with ordinary files and a FIFO, a 3 GiB sparse file and a link loop."""
    (tmp_path / "app.py").write_text("needle = 1\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("def needle():\n    return 2\n")
    os.mkfifo(tmp_path / "pipe")
    os.mkfifo(tmp_path / "src" / "pipe.py")
    with (tmp_path / "huge.log").open("wb") as f:
        f.truncate(3 * GIB)
    os.symlink("loop_b", tmp_path / "loop_a")
    os.symlink("loop_a", tmp_path / "loop_b")
    return tmp_path


async def _call(root: Path, name: str, **arguments: Any) -> ToolResult:
    """The call as the loop runs it: prepared, stamped (in a worker), then run; bounded."""
    prepared = prepare(
        ToolCall(id="c1", name=name, arguments=json.dumps(arguments)),
        default_tools(),
    )
    assert isinstance(prepared, PreparedCall), prepared
    ctx = ToolContext(root=root, host=MemoryEditor())
    started = time.monotonic()
    prepared = await stamped(prepared, ctx)
    result = await run(prepared, ctx)
    assert time.monotonic() - started < 20, (name, arguments)
    assert not any(word in result.content for word in INTERNALS), result.content
    return result


@pytest.mark.parametrize("path", ["pipe", "src/pipe.py"])
async def test_read_file_of_a_fifo(hostile: Path, path: str) -> None:
    result = await _call(hostile, "read_file", path=path)
    assert result.is_error
    assert result.content == f"{path} is not a regular file (it is a FIFO); it was not read"


async def test_read_file_of_a_sparse_file_reads_nothing(hostile: Path) -> None:
    result = await _call(hostile, "read_file", path="huge.log")
    assert result.is_error
    assert result.content == "huge.log: file too large (3221 MB; the limit is 32 MB)"


async def test_read_file_of_a_link_loop(hostile: Path) -> None:
    result = await _call(hostile, "read_file", path="loop_a")
    assert result.is_error
    assert "symbolic link loop" in result.content


async def test_list_files_leaves_the_loop_out_and_lists_the_rest(hostile: Path) -> None:
    result = await _call(hostile, "list_files")
    assert not result.is_error
    listed = result.content.splitlines()
    assert {"app.py", "src/util.py", "pipe", "huge.log"} <= set(listed)
    assert "loop_a" not in listed and "loop_b" not in listed


async def test_search_skips_what_is_not_a_regular_file(hostile: Path) -> None:
    result = await _call(hostile, "search", pattern="needle")
    assert not result.is_error
    assert result.content.startswith("2 matches in 2 files: app.py, src/util.py")


async def test_search_of_a_fifo_or_a_loop_by_name(hostile: Path) -> None:
    fifo = await _call(hostile, "search", pattern="x", path="pipe")
    assert fifo.is_error and "not a regular file (it is a FIFO)" in fifo.content
    loop = await _call(hostile, "search", pattern="x", path="loop_a")
    assert loop.is_error and "symbolic link loop" in loop.content


async def test_search_reads_only_the_head_of_a_large_file(tmp_path: Path) -> None:
    line = "filler " * 15 + "\n"
    count = MAX_SEARCH_FILE_BYTES // len(line) + 1000
    with (tmp_path / "big.txt").open("w") as f:
        f.write("needle at the start\n")
        f.write(line * count)
        f.write("needle at the end\n")
    result = await _call(tmp_path, "search", pattern="needle")
    assert result.content.startswith("1 matches in 1 files: big.txt"), result.content
    assert "  1: needle at the start" in result.content
    assert "needle at the end" not in result.content
    assert result.content.endswith(
        "[searched only the first 2 MB of 1 larger file(s): big.txt; read_file reads on]"
    )


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("edit_file", {"path": "pipe", "old_string": "a", "new_string": "b"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("create_file", {"path": "pipe", "content": "x"}),
        ("delete_file", {"path": "pipe"}),
        ("rename_file", {"path": "pipe", "new_path": "moved"}),
        ("replace_lines", {"path": "pipe", "start_line": 1, "end_line": 1, "new_text": "x"}),
        ("edit_file", {"path": "huge.log", "old_string": "a", "new_string": "b"}),
        ("write_file", {"path": "huge.log", "content": "x"}),
        ("edit_file", {"path": "loop_a", "old_string": "a", "new_string": "b"}),
        ("write_file", {"path": "loop_a", "content": "x"}),
    ],
)
async def test_changing_tools_refuse_and_write_nothing(
    hostile: Path, name: str, arguments: dict[str, Any]
) -> None:
    result = await _call(hostile, name, **arguments)
    assert result.is_error, result.content
    assert not result.edits
    assert (hostile / "pipe").is_fifo()
    assert (hostile / "huge.log").stat().st_size == 3 * GIB
    assert not (hostile / "moved").exists()


async def test_a_session_that_meets_them_all_ends_normally(hostile: Path) -> None:
    calls = [
        call("read_file", "r1", path="pipe"),
        call("read_file", "r2", path="huge.log"),
        call("read_file", "r3", path="loop_a"),
        call("list_files", "l1"),
        call("search", "s1", pattern="needle"),
        call("edit_file", "e1", path="pipe", old_string="a", new_string="b"),
    ]
    # The only edit failed (a FIFO is no file to edit): the done checks do not take the claim
    # of done, the model can only say again that it cannot, and the session ends failed with
    # what happened in the person's words, not with an error nor a hang.
    cannot = reply(content="pipe is not a regular file: it cannot be edited.")
    provider = ScriptedProvider([reply(*calls), reply(content="All looked at."), cannot, cannot])
    editor = MemoryEditor()
    session = Session(
        session_id="s1", task="look around", root=hostile, provider=provider, editor=editor
    )
    outcome = await session.run()
    assert outcome.stop_reason == "failed", outcome
    assert outcome.message == (
        "Not done: nothing was changed: the edit the agent tried did not apply"
    )
    assert len(provider.requests) == 4
    nudges = [
        m.content for m in session.messages if isinstance(m, UserMessage) and m.tag == "check"
    ]
    assert len(nudges) == 2 and all("each of your 1 edit call(s) failed" in n for n in nudges)
    answers = {m.tool_call_id: m.content for m in session.messages if isinstance(m, ToolMessage)}
    assert set(answers) == {"r1", "r2", "r3", "l1", "s1", "e1"}
    assert "not a regular file" in answers["r1"]
    assert "file too large" in answers["r2"]
    assert "symbolic link loop" in answers["r3"]
    assert "app.py" in answers["l1"]
    assert "app.py" in answers["s1"]
    assert "not a regular file" in answers["e1"]


async def test_a_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    with deep_folder(tmp_path) as deep:
        Path(deep, "deep.py").write_text("needle = 3\n")
        listed = await _call(tmp_path, "list_files")
        assert listed.content.endswith("/a/deep.py")
        found = await _call(tmp_path, "search", pattern="needle")
        assert found.content.startswith("1 matches in 1 files")
        provider = ScriptedProvider([reply(content="Seen.")])
        session = Session(
            session_id="s1", task="look", root=tmp_path, provider=provider, editor=MemoryEditor()
        )
        assert (await session.run()).stop_reason == "end_turn"  # its first message lists it


async def test_a_pattern_that_backtracks_for_ever_is_stopped_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pattern, "MAX_PATTERN_S", 1.0)
    (tmp_path / "data.txt").write_text("a" * 5000 + "c\n")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.monotonic()
    try:
        result = await _call(tmp_path, "search", pattern="(a|aa)+$b")
    finally:
        task.cancel()
    elapsed = time.monotonic() - started
    assert result.is_error
    assert result.content == (
        "the pattern took longer than 1 s to match; search for plain text or a simpler pattern"
    )
    assert ticks >= elapsed / 0.05 / 4  # the event loop kept running while it matched
