"""``run_command`` through the client's ``terminal/*`` (the Peer runs the command itself)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from acp import text_block

from tests.acp.conftest import WAIT_S, Start
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

SHELL = shutil.which("bash") or "/bin/sh"


async def test_run_command_in_the_client_terminal(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    fake.script(
        call("run_command", {"command": "pwd; echo out; echo err >&2; exit 3", "cwd": "sub"}, "c1"),
        text("It failed with 3."),
    )
    agent = await start(terminal=True)
    peer = agent.peer
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("run it")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    assert [method for method, _ in peer.terminal_calls] == [
        "create",
        "wait_for_exit",
        "output",
        "release",
    ]
    assert peer.terminal_calls[0][1] == {
        "command": SHELL,
        "args": ["-c", "pwd; echo out; echo err >&2; exit 3"],
        "cwd": str(workspace / "sub"),
        "limit": 32_000,
    }
    result = list(tool_messages(fake.requests[1]))[-1]["content"]
    assert result.startswith("exit code 3\n")
    assert f"{workspace / 'sub'}\nout\nerr" in result
    updates = [u for u in peer.updates(sid) if u.get("toolCallId") == "c1"]
    terminal = {"type": "terminal", "terminalId": "term-1"}
    embedded = [u for u in updates if terminal in u.get("content", [])]
    assert embedded[0]["sessionUpdate"] == "tool_call_update" and "status" not in embedded[0]
    assert updates[-1]["status"] == "failed"  # a non-zero exit
    assert updates[-1]["content"][0] == terminal  # still shown when the call ends
    assert "exit code 3" in updates[-1]["content"][1]["content"]["text"]


async def test_timeout_and_cancel_kill_the_client_terminal(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(
        call("run_command", {"command": "echo started; sleep 30", "timeout_s": 1}, "c1"),
        call("run_command", {"command": "sleep 31"}, "c2"),
    )
    agent = await start(terminal=True)
    peer = agent.peer
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    turn = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("wait")]))
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while "term-2" not in peer.terminals:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    timed_out = list(tool_messages(fake.requests[1]))[-1]["content"]
    assert timed_out.startswith("timed out after 1 s; the command was killed.")
    assert "started" in timed_out
    assert [m for m, p in peer.terminal_calls if p.get("terminalId") == "term-1"] == [
        "wait_for_exit",
        "kill",
        "output",
        "release",
    ]
    await agent.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(turn, WAIT_S)
    assert response.stop_reason == "cancelled"
    assert [m for m, p in peer.terminal_calls if p.get("terminalId") == "term-2"] == [
        "wait_for_exit",
        "kill",
        "release",
    ]
    assert peer.terminals["term-2"].returncode is not None  # killed, not left running
