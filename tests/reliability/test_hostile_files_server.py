"""Hostile workspace files through the real processes: the session goes on, the server answers.

A FIFO, a 3 GiB sparse file and a symbolic link loop in the workspace; a scripted model on
loopback reads, lists and searches them:

- through ``cadenza serve`` (the pytest-lsp harness as the editor): every call is answered
  with a plain error or a result, the session ends ``end_turn``, and while a long ``search``
  reads the disk, another request (``cadenza.listSessions``) is answered before it is done
  (the reads run off the event loop);
- through ``cadenza run`` on a plain folder (its disk snapshot walks the FIFO too): the run
  ends normally, with exit status 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.harness import capabilities, server_env, start_harness, stop_harness
from tests.support.fake_openai import FakeOpenAI, Reply, assert_tool_calls_answered, text, tool_call

GIB = 1 << 30
SLOW_FILES = 60
"""Files of 2 MB each that the slow search reads (about 2 s on a loaded 2-core machine)."""


def hostile_workspace(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text("needle = 1\n")
    os.mkfifo(root / "pipe")
    with (root / "huge.log").open("wb") as f:
        f.truncate(3 * GIB)
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    return root


def slow_folder(root: Path) -> None:
    line = "word " * 15 + "\n"
    chunk = line * (2_000_000 // len(line))
    (root / "data").mkdir()
    for i in range(SLOW_FILES):
        (root / "data" / f"f{i:02}.txt").write_text(chunk)


HOSTILE_CALLS = [
    ("r_fifo", "read_file", {"path": "pipe"}),
    ("r_huge", "read_file", {"path": "huge.log"}),
    ("r_loop", "read_file", {"path": "loop_a"}),
    ("list", "list_files", {}),
    ("search", "search", {"pattern": "needle"}),
]


def final_updates(updates: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        u["toolCallId"]: u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    }


def content_text(update: dict[str, Any]) -> str:
    return json.dumps(update.get("content") or update.get("rawOutput") or "")


async def test_the_server_answers_while_a_session_reads_hostile_files(tmp_path: Path) -> None:
    root = hostile_workspace(tmp_path / "work")
    slow_folder(root)
    with FakeOpenAI() as fake:
        fake.script(
            Reply(tool_calls=[tool_call(name, args, cid) for cid, name, args in HOSTILE_CALLS]),
            Reply(
                tool_calls=[tool_call("search", {"pattern": "zzz-absent", "path": "data"}, "slow")]
            ),
            text("Looked at everything."),
        )
        env = server_env(fake.base_url, tmp_path / "home")
        harness, _ = await start_harness(root=root, env=env, caps=capabilities())
        try:
            session_id = await harness.start("look at the workspace")
            deadline = time.monotonic() + 60
            while not any(
                u.get("toolCallId") == "slow" for u in harness.updates.get(session_id, [])
            ):
                assert time.monotonic() < deadline, harness.kinds(session_id)
                await asyncio.sleep(0.01)
            # The slow search has started: the server must still answer at once.
            asked = time.monotonic()
            listed = await asyncio.wait_for(harness.execute("cadenza.listSessions", {}), 10)
            answered_in = time.monotonic() - asked
            slow_done = "slow" in final_updates(harness.updates[session_id])
            end = await harness.wait_end(session_id, timeout=120)
            updates = harness.updates[session_id]
        finally:
            await stop_harness(harness)
        requests = fake.requests
    assert any(s["sessionId"] == session_id for s in listed["sessions"]), listed
    assert not slow_done, f"listSessions was answered only after the search ({answered_in:.2f} s)"
    assert end["stopReason"] == "end_turn", end
    final = final_updates(updates)
    assert final["r_fifo"]["status"] == "failed"
    assert "not a regular file (it is a FIFO)" in content_text(final["r_fifo"])
    assert "file too large (3221 MB; the limit is 32 MB)" in content_text(final["r_huge"])
    assert "symbolic link loop" in content_text(final["r_loop"])
    assert final["list"]["status"] == "completed" and "app.py" in content_text(final["list"])
    assert final["search"]["status"] == "completed" and "app.py" in content_text(final["search"])
    assert final["slow"]["status"] == "completed" and "no matches" in content_text(final["slow"])
    for update in final.values():
        assert "Traceback" not in content_text(update) and "Error:" not in content_text(update)
    assert len(requests) == 3
    for request in requests[1:]:
        assert_tool_calls_answered(request)


def test_cadenza_run_on_a_folder_with_a_fifo_ends_normally(tmp_path: Path) -> None:
    root = hostile_workspace(tmp_path / "work")
    with FakeOpenAI() as fake:
        fake.script(
            Reply(tool_calls=[tool_call(name, args, cid) for cid, name, args in HOSTILE_CALLS]),
            text("Nothing to change."),
        )
        env = server_env(fake.base_url, tmp_path / "home")
        argv = [sys.executable, "-m", "cadenza", "run", "--workspace", str(root)]
        try:
            done = subprocess.run(
                [*argv, "--model", "openai/test", "--output", "json", "look around"],
                env={**env, "NO_COLOR": "1"},
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            pytest.fail("cadenza run hung on a workspace holding a FIFO")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["stop_reason"] == "end_turn", report
    assert report["files"] == []
    assert "Traceback" not in done.stderr
