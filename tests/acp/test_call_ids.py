"""Call ids through ``cadenza acp``: a model that reuses ``call_0`` every turn and
sends an empty id once still gives the client one distinct ``toolCallId`` per call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block

from tests.acp.conftest import WAIT_S, Start
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    assert_tool_calls_answered,
    call,
    text,
    tool_call,
)


def call_ids(updates: list[dict[str, Any]], kind: str) -> list[str]:
    return [u["toolCallId"] for u in updates if u["sessionUpdate"] == kind]


async def test_reused_and_empty_call_ids_reach_the_client_distinct(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    fake.script(
        call("list_files", {"path": "."}, "call_0"),
        Reply(tool_calls=[tool_call("search", {"query": "x"}, "")]),
        call("run_command", {"command": "true"}, "call_0"),
        call("search", {"query": "y"}, "call_0"),
        text("done"),
    )
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("look around")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"

    updates = agent.peer.updates(sid)
    started = call_ids(updates, "tool_call")
    assert len(started) == 4 and len(set(started)) == 4
    seen: set[str] = set()
    for update in updates:
        if update["sessionUpdate"] == "tool_call":
            seen.add(update["toolCallId"])
        elif update["sessionUpdate"] == "tool_call_update":
            assert update["toolCallId"] in seen, update
    assert set(call_ids(updates, "tool_call_update")) == set(started)
    [(permission, _)] = agent.peer.permissions
    assert permission.tool_call_id == started[2]
    assert_tool_calls_answered(fake.requests[-1])
