"""``host.workspace_lock``: a command's window is its session's alone (sessions, processes).

Sessions of one process take the lock through their own descriptors (they exclude each other);
another process holds it for real in one test. The command watch (``host.command_changes``)
is run by two sessions on one workspace: the other session's edit waits for the command, so
it is never recorded as the command's change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from cadenza.host.checkpoints import SessionCheckpoint
from cadenza.host.command_changes import CheckpointedCommands
from cadenza.host.workspace_lock import (
    Holder,
    WorkspaceBusy,
    WorkspaceLock,
    lock_key,
    read_holder,
)
from cadenza.secrets import REDACTED, register_secret


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = (tmp_path / "ws").resolve()
    base.mkdir()
    (base / "app.py").write_text("a = 1\n")
    return base


def lock(root: Path, tmp_path: Path, session_id: str, wait_s: float = 10.0) -> WorkspaceLock:
    return WorkspaceLock(root, session_id=session_id, directory=tmp_path / "locks", wait_s=wait_s)


def test_a_folder_of_a_work_tree_shares_the_work_trees_lock(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../repo/.git/worktrees/wt\n")
    plain = tmp_path / "plain"
    (plain / "sub").mkdir(parents=True)
    assert lock_key(repo / "src" / "deep") == lock_key(repo) == lock_key(repo / "src")
    assert lock_key(worktree) != lock_key(repo)
    assert lock_key(plain / "sub") != lock_key(plain)
    (tmp_path / "link").symlink_to(repo)
    assert lock_key(tmp_path / "link") == lock_key(repo)


async def test_a_command_excludes_edits_and_commands_edits_share(
    tmp_path: Path, root: Path
) -> None:
    told: list[str] = []
    held = await lock(root, tmp_path, "a").acquire(command="make test")
    with pytest.raises(WorkspaceBusy) as busy:
        await lock(root, tmp_path, "b", wait_s=0.3).acquire(command=None, on_wait=told.append)
    expected = f"session a (process {os.getpid()}) is running `make test`"
    assert told == [expected]  # told once, though it tried many times
    assert str(busy.value) == f"the workspace stayed busy for 0.3 s: {expected}"
    with pytest.raises(WorkspaceBusy):
        await lock(root, tmp_path, "c", wait_s=0.2).acquire(command="pytest")
    held.release()
    held.release()  # idempotent

    first = await lock(root, tmp_path, "b").acquire(command=None)
    second = await lock(root, tmp_path, "c").acquire(command=None)  # edits side by side
    waits: list[str] = []
    with pytest.raises(WorkspaceBusy) as busy:
        await lock(root, tmp_path, "a", wait_s=0.2).acquire(command="make", on_wait=waits.append)
    assert waits == ["another Cadenza session is changing files in this workspace"]
    first.release()
    second.release()
    (await lock(root, tmp_path, "a", wait_s=0.2).acquire(command="make")).release()


async def test_a_waiting_command_runs_once_the_edit_is_over(tmp_path: Path, root: Path) -> None:
    edit = await lock(root, tmp_path, "b").acquire(command=None)
    order: list[str] = []

    async def command() -> None:
        held = await lock(root, tmp_path, "a").acquire(command="make")
        order.append("command")
        held.release()

    async with anyio.create_task_group() as tg:
        tg.start_soon(command)
        await anyio.sleep(0.3)
        order.append("edit over")
        edit.release()
    assert order == ["edit over", "command"]


async def test_a_cancelled_wait_holds_nothing(tmp_path: Path, root: Path) -> None:
    held = await lock(root, tmp_path, "a").acquire(command="make")
    with anyio.move_on_after(0.2):
        await lock(root, tmp_path, "b").acquire(command=None)
    held.release()
    (await lock(root, tmp_path, "c", wait_s=0.2).acquire(command="make")).release()


async def test_a_program_the_command_leaves_running_does_not_keep_the_lock(
    tmp_path: Path, root: Path
) -> None:
    held = await lock(root, tmp_path, "a").acquire(command="serve &")
    child = subprocess.Popen(["sleep", "30"], close_fds=False)  # inherits what it may
    try:
        held.release()
        (await lock(root, tmp_path, "b", wait_s=0.5).acquire(command="make")).release()
    finally:
        child.kill()
        child.wait()


def test_the_holders_name_is_cleared_and_a_dead_holders_ignored(tmp_path: Path, root: Path) -> None:
    path = lock(root, tmp_path, "a").path
    path.parent.mkdir(parents=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    record = {"sessionId": "gone", "pid": int(dead.stdout), "command": "make"}
    path.write_text(json.dumps(record))
    assert read_holder(path) is None
    path.write_text("not json")
    assert read_holder(path) is None


async def test_another_process_holding_the_lock_is_named_and_waited_for(
    tmp_path: Path, root: Path
) -> None:
    directory = tmp_path / "locks"
    holder = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from cadenza.host.workspace_lock import WorkspaceLock\n"
        "async def main():\n"
        f"    lock = WorkspaceLock(Path({str(root)!r}), session_id='other',"
        f" directory=Path({str(directory)!r}))\n"
        "    held = await lock.acquire(command='sleep 1')\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.readline()\n"
        "    held.release()\n"
        "asyncio.run(main())\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", holder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        assert process.stdout.readline() == "held\n"
        told: list[str] = []
        with pytest.raises(WorkspaceBusy):
            await lock(root, tmp_path, "mine", wait_s=0.3).acquire(
                command=None, on_wait=told.append
            )
        assert told == [f"session other (process {process.pid}) is running `sleep 1`"]
        process.stdin.write("\n")
        process.stdin.flush()
        with anyio.fail_after(10):
            (await lock(root, tmp_path, "mine").acquire(command="make")).release()
    finally:
        process.kill()
        process.wait()
    # A holder that dies releases the lock with it (the OS drops a flock with its descriptor).


async def test_another_sessions_edit_is_not_the_commands_change(tmp_path: Path, root: Path) -> None:
    """A's command runs while B edits: B's write waits, and A records only its own file."""
    checkpoint_a = SessionCheckpoint.for_session("a", root, base=tmp_path / "cp")
    checkpoint_b = SessionCheckpoint.for_session("b", root, base=tmp_path / "cp")
    watch_a = CheckpointedCommands(checkpoint_a, lock=lock(root, tmp_path, "a"))
    watch_b = CheckpointedCommands(checkpoint_b, lock=lock(root, tmp_path, "b"))
    told: list[str] = []

    async def edit_b() -> None:
        async with watch_b.editing(told.append) as busy:
            assert busy is None
            (root / "app.py").write_text("a = 2\n")

    assert await watch_a.before("make gen", told.append) is None
    async with anyio.create_task_group() as tg:
        tg.start_soon(edit_b)
        await anyio.sleep(0.3)
        assert (root / "app.py").read_text() == "a = 1\n"  # B waits for A's command
        (root / "gen.txt").write_text("generated\n")  # what A's command writes
        changed = await watch_a.after()
    assert [c.path for c in changed] == ["gen.txt"]
    assert sorted(checkpoint_a.entries) == ["gen.txt"]
    assert (root / "app.py").read_text() == "a = 2\n"
    assert told == [f"session a (process {os.getpid()}) is running `make gen`"]


async def test_a_busy_workspace_refuses_the_call_and_holds_nothing(
    tmp_path: Path, root: Path
) -> None:
    checkpoint = SessionCheckpoint.for_session("b", root, base=tmp_path / "cp")
    watch = CheckpointedCommands(checkpoint, lock=lock(root, tmp_path, "b", wait_s=0.2))
    held = await lock(root, tmp_path, "a").acquire(command="make")
    why = (
        f"the workspace stayed busy for 0.2 s: session a (process {os.getpid()}) is running `make`"
    )
    assert await watch.before("pytest") == why
    async with watch.editing() as busy:
        assert busy == why
    held.release()
    assert await watch.before("pytest") is None
    assert await watch.after() == []
    (await lock(root, tmp_path, "a", wait_s=0.2).acquire(command="make")).release()


def test_the_holders_command_is_redacted_before_it_is_cut() -> None:
    key = "sk-lock-" + "7" * 90  # past the cut: a cut key would no longer match
    register_secret(key)
    command = f"curl -H 'Authorization: Bearer {key}' https://example.test\nmore"
    said = Holder(session_id="a", pid=1, command=command).describe()
    assert key[:20] not in said and REDACTED in said
    assert said.endswith("…`")
