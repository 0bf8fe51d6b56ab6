"""MCP servers through the ACP face: ``session/new`` ``mcpServers`` (stdio)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from acp import text_block
from acp.schema import EnvVariable, McpServerStdio

from tests.acp.conftest import WAIT_S, Start
from tests.mcp.conftest import ECHO
from tests.mcp.test_engine import gone
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages


async def test_session_new_mcp_servers_give_the_session_tools(
    start: Start, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    fake.script(
        call("mcp__echo__shout", {"text": "hi"}, "c1"),
        call("mcp__echo__pid", {}, "c2"),
        text("shouted"),
    )
    agent = await start()
    init = next(m for m in agent.peer.wire if m["dir"] == "in" and m.get("id") == 0)["result"]
    assert init["agentCapabilities"]["mcpCapabilities"]["http"] is True
    servers = [
        McpServerStdio(
            name="echo",
            command=sys.executable,
            args=[str(ECHO)],
            env=[EnvVariable(name="ECHO_PREFIX", value="acp:")],
        ),
        McpServerStdio(name="broken", command="/nonexistent/mcp", args=[], env=[]),
    ]
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=servers)
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("shout hi")]),
        WAIT_S,
    )
    assert response.stop_reason == "end_turn"
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert "mcp__echo__shout" in offered and not any("broken" in n for n in offered)
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(fake.requests[2])}
    assert results["c1"] == "acp:HI"
    asked = [update.tool_call_id for update, _ in agent.peer.permissions]
    assert asked == ["c1", "c2"]  # gated by default
    log = (tmp_path / "agent1.log").read_text(errors="replace")
    assert "MCP server 'broken' did not start" in log

    other = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    fake.script(text("nothing"))
    await asyncio.wait_for(
        agent.conn.prompt(session_id=other.session_id, prompt=[text_block("hello")]), WAIT_S
    )
    offered = {t["function"]["name"] for t in fake.requests[-1]["tools"]}
    assert not any(n.startswith("mcp__") for n in offered)  # the first session's only
    pid = int(results["c2"])
    assert not gone(pid, within_s=0.2)  # alive while its session is

    # The session's servers stay up between its prompts: the next turn calls the same process,
    # and the server that did not start is not tried again.
    fake.script(call("mcp__echo__pid", {}, "c3"), text("same"))
    again = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("pid again")]),
        WAIT_S,
    )
    assert again.stop_reason == "end_turn"
    later = {m["tool_call_id"]: m["content"] for m in tool_messages(fake.requests[-1])}
    assert int(later["c3"]) == pid
    log = (tmp_path / "agent1.log").read_text(errors="replace")
    assert log.count("MCP server 'broken' did not start") == 1


SLOW_FIRST_START = (
    "import os, pathlib, runpy, sys, time\n"
    "marker = pathlib.Path(sys.argv[1])\n"
    "if not marker.exists():\n"
    "    marker.write_text(str(os.getpid()))\n"
    "    time.sleep(60)\n"
    "sys.argv = sys.argv[2:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)
"""An echo server whose first start hangs (it writes its pid first); later starts serve."""


async def test_a_server_whose_start_was_cancelled_starts_with_the_next_prompt(
    start: Start, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "first-start"
    server = McpServerStdio(
        name="echo",
        command=sys.executable,
        args=["-c", SLOW_FIRST_START, str(marker), str(ECHO)],
        env=[],
    )
    agent = await start()
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[server])).session_id
    first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("one")]))
    deadline = time.monotonic() + WAIT_S
    while not marker.exists() or not marker.read_text():
        assert time.monotonic() < deadline, "the server did not start"
        await asyncio.sleep(0.05)
    await agent.conn.cancel(session_id=sid)
    assert (await asyncio.wait_for(first, WAIT_S)).stop_reason == "cancelled"
    assert gone(int(marker.read_text()))  # the start that was cancelled left no process

    # The cancel was no failure of the server's: the next prompt starts it and offers its tools.
    fake.script(call("mcp__echo__shout", {"text": "hi"}, "c1"), text("shouted"))
    again = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("shout hi")]), WAIT_S
    )
    assert again.stop_reason == "end_turn"
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(fake.requests[-1])}
    assert results["c1"] == "HI"
