"""Cancellation through each of its three doors, measured, with the child process gone.

``cadenza.cancelSession``, ``$/cancelRequest`` for the ``cadenza.startSession`` request and
``window/workDoneProgress/cancel`` all cancel: the running command's process group is killed,
the session ends with ``cancelled``, and nothing of it arrives after its ``session_end``.
The latency (cancel sent → ``session_end`` received, in this client) is printed, not asserted
tightly: the bound is 2 s, the aim 200 ms.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.rawclient import RawClient
from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities, server_env
from tests.lsp.test_waiting import wait_for
from tests.support.fake_openai import FakeOpenAI, Reply, call

SLEEP = {"command": "echo $$ > sleep.pid; exec sleep 30"}


def gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state == "Z"


async def start_with_id(editor: Harness, task: str, msg_id: str) -> str:
    params = types.ExecuteCommandParams(
        command="cadenza.startSession", arguments=[{"task": task, "model": "openai/test"}]
    )
    result = await editor.client.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id
    )
    return str(result["sessionId"])


async def cancel(editor: Harness, how: str, session_id: str, msg_id: str) -> None:
    if how == "cancelSession":
        await editor.execute("cadenza.cancelSession", {"sessionId": session_id})
    elif how == "cancelRequest":
        editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    else:
        [token] = editor.client.progress_reports
        editor.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=token)
        )


@pytest.mark.parametrize("how", ["cancelSession", "cancelRequest", "progressCancel"])
async def test_cancel_kills_the_command_and_ends_the_session(
    connect: Connect, fake: FakeOpenAI, workspace: Path, how: str
) -> None:
    editor = await connect(caps=capabilities(request_permission=True))
    fake.script(call("run_command", SLEEP, "c1"))
    msg_id = f"start-{how}"
    session_id = await start_with_id(editor, "sleep a while", msg_id)
    pid_file = workspace / "sleep.pid"
    await wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    pid = int(pid_file.read_text())
    await asyncio.sleep(1.0)  # cancel 1 s later
    assert not gone(pid)

    loop = asyncio.get_running_loop()
    sent = loop.time()
    await cancel(editor, how, session_id, msg_id)
    end = await editor.wait_end(session_id, timeout=5)
    latency_ms = (loop.time() - sent) * 1000
    print(f"\nF07 {how}: session_end after {latency_ms:.1f} ms")

    assert end["stopReason"] == "cancelled"
    assert latency_ms < 2000
    await wait_for(lambda: gone(pid), timeout=2)
    await asyncio.sleep(0.3)
    updates: list[dict[str, Any]] = editor.updates[session_id]
    assert updates[-1]["sessionUpdate"] == "session_end"
    assert [u["sessionUpdate"] for u in updates].count("session_end") == 1
    # The killed call still ends in the editor (a final status), just before session_end.
    assert updates[-2] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "failed",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "cancelled while running"}}
        ],
    }


async def test_cancel_during_the_model_request(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect()
    fake.script(Reply(delay_s=30, content="too late"))
    session_id = await editor.start("wait for the model")
    await wait_for(lambda: len(fake.requests) == 1)
    loop = asyncio.get_running_loop()
    sent = loop.time()
    await editor.execute("cadenza.cancelSession", {"sessionId": session_id})
    end = await editor.wait_end(session_id, timeout=5)
    print(
        f"\ncancel during the model request: session_end after {(loop.time() - sent) * 1000:.1f} ms"
    )
    assert end["stopReason"] == "cancelled"


async def test_sigterm_stops_the_server_and_its_commands(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    fake.script(call("run_command", SLEEP, "c1"))
    env = server_env(fake.base_url, tmp_path / "home")
    user = Path(env["XDG_CONFIG_HOME"]) / "cadenza"
    user.mkdir()
    # The person's own config lets commands run unasked (initializationOptions cannot).
    (user / "cadenza.toml").write_text(
        'model = "openai/test"\n[permissions]\ngated = []\n', encoding="utf-8"
    )
    client = await RawClient.start(
        root=workspace,
        env=env,
        stderr=tmp_path / "server.log",
        init_options={"model": "openai/test"},
    )
    try:
        await client.start_session({"task": "sleep a while"})
        pid_file = workspace / "sleep.pid"
        await wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "", timeout=60)
        pid = int(pid_file.read_text())
        client.proc.terminate()
        status = await asyncio.wait_for(client.proc.wait(), 30)
        assert status != 0
        await wait_for(lambda: gone(pid), timeout=10)
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
