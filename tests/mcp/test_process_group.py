"""A stdio MCP server's whole process group ends with its connection.

The test server starts a worker (``sleep 300``) in its group and exits as soon as its stdin
closes; the SDK's own transport stopped the group only for a server that lingered, so the
worker outlived the session.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import mcp_types
from acp import text_block
from acp.schema import McpServerStdio
from mcp import ClientSession, StdioServerParameters

from cadenza.mcp.stdio import stdio_server
from cadenza.procgroups import live_groups
from tests.acp.conftest import WAIT_S, Start
from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

SPAWNER = Path(__file__).with_name("server_spawner.py")


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped does not: PID 1 may not reap orphans)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stopped(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while running(pid):
        if time.monotonic() > deadline:
            os.kill(pid, 9)  # leave nothing behind, then fail
            return False
        time.sleep(0.05)
    return True


async def worker_of(session: ClientSession) -> int:
    await session.initialize()
    result = await session.call_tool("worker_pid", {})
    [content] = result.content
    assert isinstance(content, mcp_types.TextContent)
    return int(content.text)


async def test_a_server_that_exits_on_stdin_close_takes_its_worker_along() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SPAWNER)])
    async with stdio_server(params) as (read, write), ClientSession(read, write) as session:
        worker = await worker_of(session)
        assert running(worker)
    assert stopped(worker, within_s=0.5), "the worker outlived the connection"
    assert not live_groups()


async def test_a_server_that_lingers_after_stdin_close_is_stopped_with_its_group() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SPAWNER), "linger"])
    started = time.monotonic()
    async with stdio_server(params) as (read, write), ClientSession(read, write) as session:
        worker = await worker_of(session)
        started = time.monotonic()
    assert time.monotonic() - started < 6.0  # the exit grace, then SIGTERM
    assert stopped(worker, within_s=0.5)


async def test_lsp_session_end_stops_the_mcp_servers_worker(
    connect: Connect, fake: FakeOpenAI
) -> None:
    servers = [{"name": "spawner", "command": sys.executable, "args": [str(SPAWNER)]}]
    editor = await connect(
        caps=capabilities(request_permission=True), user_config={"mcp": {"servers": servers}}
    )
    fake.script(call("mcp__spawner__worker_pid", {}, "c1"), text("done"))
    _, end = await editor.run("find the worker")

    assert end["stopReason"] == "end_turn"
    [result] = tool_messages(fake.requests[-1])
    worker = int(result["content"])
    assert stopped(worker), "the MCP server's worker outlived the session"


async def test_acp_agent_exit_stops_the_mcp_servers_worker(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(call("mcp__spawner__worker_pid", {}, "c1"), text("done"))
    agent = await start()
    server = McpServerStdio(name="spawner", command=sys.executable, args=[str(SPAWNER)], env=[])
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[server])
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("find it")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    [result] = tool_messages(fake.requests[-1])
    worker = int(result["content"])
    assert running(worker)  # an ACP session lives as long as its agent

    assert agent.process.stdin is not None
    agent.process.stdin.close()  # the client goes away: the agent ends its sessions and exits
    await asyncio.wait_for(agent.process.wait(), WAIT_S)
    assert stopped(worker), "the MCP server's worker outlived the agent"
