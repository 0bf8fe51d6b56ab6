"""A command started just before a SIGTERM (or a cancel) does not outlive the server.

The window between the spawn of ``run_command``'s shell and the registration of its process
group is widened here: the spawn is wrapped so that it waits, after the real spawn, until the
command's background ``sleep`` runs, and the SIGTERM (or the cancel) arrives inside it. The
SIGTERM case runs in a process of its own with the server's own handler
(``lsp.main._terminate``) and its exit path (``kill_live_groups``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from cadenza.procgroups import live_groups
from cadenza.tools.base import ToolContext
from cadenza.tools.shell import RunCommand, RunCommandArgs
from tests.doubles import MemoryEditor
from tests.tools.test_shell import gone, read_pids

SCRIPT = """
import asyncio, os, signal, sys, time
from pathlib import Path
import anyio
from cadenza.lsp.main import _terminate
from cadenza.procgroups import kill_live_groups
from cadenza.tools.base import ToolContext
from cadenza.tools.shell import RunCommand, RunCommandArgs
from tests.doubles import MemoryEditor

root, pidfile = Path(sys.argv[1]), Path(sys.argv[2])
real_open = anyio.open_process

async def spawn_then_sigterm(*args, **kwargs):
    process = await real_open(*args, **kwargs)
    while not pidfile.exists():  # the command's background job runs
        await asyncio.sleep(0.01)
    os.kill(os.getpid(), signal.SIGTERM)  # the server is told to stop mid-spawn
    await asyncio.sleep(0.3)
    return process

anyio.open_process = spawn_then_sigterm
signal.signal(signal.SIGTERM, _terminate)

async def main():
    args = RunCommandArgs(command=f"sleep 300 & echo $! > {pidfile}; wait")
    await RunCommand().invoke(args, ToolContext(root=root, host=MemoryEditor()))

try:
    asyncio.run(main())
    status = 0
except SystemExit as exc:
    status = exc.code
kill_live_groups()  # what the server does once its loop has unwound
print(status)
"""


async def test_sigterm_during_the_spawn_kills_the_command_s_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleep.pid"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), str(pidfile)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert done.stdout.strip() == "143", done.stderr
    [sleeper] = await read_pids(pidfile)
    assert await gone(sleeper), "the command's background job outlived the server"


async def test_a_cancel_during_the_spawn_kills_the_command_s_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = tmp_path / "sleep.pid"
    spawning = asyncio.Event()
    real_open = anyio.open_process
    groups: list[int] = []

    async def slow_spawn(*args: object, **kwargs: object) -> object:
        process = await real_open(*args, **kwargs)  # type: ignore[arg-type]
        groups.append(process.pid)
        await read_pids(pidfile)
        spawning.set()
        await asyncio.sleep(0.3)
        return process

    monkeypatch.setattr(anyio, "open_process", slow_spawn)
    args = RunCommandArgs(command=f"sleep 300 & echo $! > {pidfile}; wait")
    call = RunCommand().invoke(args, ToolContext(root=tmp_path, host=MemoryEditor()))
    task = asyncio.ensure_future(call)
    await spawning.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [sleeper] = await read_pids(pidfile)
    assert await gone(sleeper), "the command's background job outlived the cancel"
    assert groups and groups[0] not in live_groups()
