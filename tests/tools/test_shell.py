"""run_command: real processes, bounded output, process groups stopped on timeout and cancel."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import anyio
import pytest

from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import ToolRegistry
from cadenza.tools.shell import MAX_TIMEOUT_S, RunCommand, RunCommandArgs
from tests.doubles import MemoryEditor


async def execute(
    tmp_path: Path, tool: RunCommand | None = None, **arguments: object
) -> ToolResult:
    """One run_command call through the dispatcher (prepare, then run)."""
    registry = ToolRegistry([tool or RunCommand()])
    call = ToolCall(id="1", name="run_command", arguments=json.dumps(arguments))
    prepared = prepare(call, registry)
    if isinstance(prepared, ToolResult):
        return prepared
    assert isinstance(prepared, PreparedCall)
    return await run(prepared, ToolContext(root=tmp_path, host=MemoryEditor()))


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (an orphan its reaper never collects) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def gone(*pids: int, within_s: float = 2.0) -> bool:
    """Poll until none of ``pids`` runs, for at most ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


async def read_pids(*files: Path, within_s: float = 5.0) -> list[int]:
    """The pids written to ``files`` by a running command, once they all exist."""
    deadline = time.monotonic() + within_s
    while not all(f.exists() and f.read_text().strip() for f in files):
        assert time.monotonic() < deadline, "the command never wrote its pids"
        await anyio.sleep(0.01)
    return [int(f.read_text()) for f in files]


async def test_output_and_exit_code_zero(tmp_path: Path) -> None:
    result = await execute(tmp_path, command="echo hello")
    assert not result.is_error
    assert result.content == "exit code 0\nhello\n"


async def test_no_output(tmp_path: Path) -> None:
    result = await execute(tmp_path, command="true")
    assert result.content == "exit code 0\n(no output)"


async def test_non_zero_exit_is_a_failed_result(tmp_path: Path) -> None:
    result = await execute(tmp_path, command="echo oops; exit 3")
    assert result.is_error
    assert result.content == "exit code 3\noops\n"


async def test_killed_by_a_signal(tmp_path: Path) -> None:
    result = await execute(tmp_path, command="kill -9 $$")
    assert result.is_error and "killed by signal 9 (SIGKILL)" in result.content


async def test_stderr_is_merged_in_order(tmp_path: Path) -> None:
    result = await execute(tmp_path, command="echo out; echo err >&2; echo out2")
    assert result.content == "exit code 0\nout\nerr\nout2\n"


async def test_stdin_is_empty(tmp_path: Path) -> None:
    result = await execute(tmp_path, command="cat; echo done", timeout_s=5)
    assert result.content == "exit code 0\ndone\n"


async def test_runs_in_the_root_by_default_and_in_a_subfolder(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    root = await execute(tmp_path, command="pwd -P")
    assert root.content == f"exit code 0\n{tmp_path.resolve()}\n"
    sub = await execute(tmp_path, command="pwd -P", cwd="sub/deeper")
    assert sub.content == f"exit code 0\n{(tmp_path / 'sub' / 'deeper').resolve()}\n"


async def test_cwd_must_be_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    not_folder = await execute(tmp_path, command="true", cwd="file.txt")
    assert not_folder.is_error and not_folder.content == "cwd file.txt is not a folder"
    missing = await execute(tmp_path, command="true", cwd="nope")
    assert missing.is_error and missing.content == "cwd nope does not exist"


async def test_cwd_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    for cwd in ["..", "../outside", str(outside), "link", "/"]:
        result = await execute(root, command="touch marker", cwd=cwd)
        assert result.is_error, cwd
        assert "outside the workspace" in result.content, cwd
    assert not (outside / "marker").exists()
    assert not (tmp_path / "marker").exists()


async def test_huge_output_keeps_head_and_tail_with_byte_counts(tmp_path: Path) -> None:
    result = await execute(
        tmp_path, command="echo FIRST; yes | head -c 5000000; echo LAST", timeout_s=30
    )
    assert not result.is_error
    total = len("FIRST\n") + 5_000_000 + len("LAST\n")
    omitted = total - 32_000
    assert f"[... {omitted} bytes omitted of {total} bytes ...]" in result.content
    assert result.content.startswith("exit code 0\nFIRST\ny\ny\n")
    assert result.content.endswith("y\ny\nLAST\n")
    assert len(result.content.encode()) < 32_000 + 200


async def test_a_cut_utf8_character_is_dropped_not_garbled(tmp_path: Path) -> None:
    tool = RunCommand(max_output_bytes=10)
    result = await execute(tmp_path, tool, command="printf 'é%.0s' $(seq 1 100)")
    # 100 two-byte characters; head and tail 5 bytes each: 2 characters and half a third.
    assert result.content == "exit code 0\néé\n[... 192 bytes omitted of 200 bytes ...]\néé"


async def test_undecodable_bytes_are_replaced(tmp_path: Path) -> None:
    result = await execute(tmp_path, command=r"printf 'a\377b\n'")
    assert result.content == "exit code 0\na\ufffdb\n"


async def test_background_leftovers_are_stopped_when_the_command_ends(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await execute(tmp_path, command="sleep 30 & echo $! > pid; echo started")
    assert time.monotonic() - started < 5
    assert result.content == "exit code 0\nstarted\n"
    (pid,) = await read_pids(tmp_path / "pid")
    assert await gone(pid)


async def test_timeout_stops_the_process_group_with_grandchildren(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await execute(
        tmp_path,
        command="echo started; sh -c 'sleep 30 & echo $! > pid; wait'",
        timeout_s=0.5,
    )
    elapsed = time.monotonic() - started
    assert result.is_error
    assert result.content.startswith("timed out after 0.5 s;")
    assert result.content.endswith("Output so far:\nstarted\n")
    assert elapsed < 3, elapsed
    (pid,) = await read_pids(tmp_path / "pid")
    assert await gone(pid)


async def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path) -> None:
    command = "trap '' TERM; echo $$ > pid; while :; do sleep 0.1; done"
    started = time.monotonic()
    result = await execute(tmp_path, command=command, timeout_s=0.3)
    elapsed = time.monotonic() - started
    assert result.is_error and result.content.startswith("timed out after 0.3 s;")
    assert 1.0 < elapsed < 4, elapsed  # the grace between SIGTERM and SIGKILL, then killed
    (pid,) = await read_pids(tmp_path / "pid")
    assert await gone(pid)


async def test_cancel_kills_the_group_at_once(tmp_path: Path) -> None:
    command = "echo $$ > leader; sh -c 'echo $$ > child; sleep 30' & sleep 30"
    task = asyncio.create_task(execute(tmp_path, command=command))
    pids = await read_pids(tmp_path / "leader", tmp_path / "child")
    assert pids[0] != pids[1]
    await asyncio.sleep(0.3)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    latency = time.monotonic() - started
    assert await gone(*pids, within_s=2.0)
    cleared = time.monotonic() - started
    print(f"cancel latency: {latency * 1000:.1f} ms; processes gone after {cleared * 1000:.1f} ms")
    assert latency < 2.0
    assert cleared < 2.0


async def test_an_anyio_cancel_scope_kills_the_group(tmp_path: Path) -> None:
    command = "sleep 30 & echo $! > child; sleep 30"
    started = 0.0
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_soon() -> None:
                nonlocal started
                await read_pids(tmp_path / "child")
                await anyio.sleep(0.3)
                started = time.monotonic()
                scope.cancel()

            tg.start_soon(cancel_soon)
            await execute(tmp_path, command=command)
    latency = time.monotonic() - started
    assert scope.cancelled_caught
    (pid,) = await read_pids(tmp_path / "child")
    assert await gone(pid, within_s=2.0)
    print(f"cancel-scope latency: {latency * 1000:.1f} ms")
    assert latency < 2.0


async def test_argument_bounds(tmp_path: Path) -> None:
    empty = await execute(tmp_path, command="")
    assert empty.is_error and "command" in empty.content
    for bad in [0, -1, MAX_TIMEOUT_S + 1]:
        result = await execute(tmp_path, command="true", timeout_s=bad)
        assert result.is_error and "timeout_s" in result.content
    unknown = await execute(tmp_path, command="true", shell="zsh")
    assert unknown.is_error and "shell" in unknown.content
    nul = await execute(tmp_path, command="echo a\x00b")
    assert nul.is_error and "NUL" in nul.content


def test_tool_settings() -> None:
    tool = RunCommand()
    assert tool.name == "run_command" and tool.kind == "execute" and not tool.read_only
    assert tool.timeout_s > MAX_TIMEOUT_S
    assert tool.default_timeout_s == 120 and tool.max_output_bytes == 32_000
    with pytest.raises(ValueError, match="default_timeout_s"):
        RunCommand(default_timeout_s=MAX_TIMEOUT_S + 1)
    with pytest.raises(ValueError, match="max_output_bytes"):
        RunCommand(max_output_bytes=0)
    params = RunCommand(default_timeout_s=30).spec().parameters
    assert "default 30," in params["properties"]["timeout_s"]["description"]
    assert set(params["required"]) == {"command"}


def test_title() -> None:
    tool = RunCommand()
    assert tool.title(RunCommandArgs(command="pytest -q")) == "running `pytest -q`"
    long = tool.title(RunCommandArgs(command="x" * 200))
    assert long == f"running `{'x' * 60}…`"
    assert tool.title(RunCommandArgs(command="make\nmake test")) == "running `make…`"
