"""``_cadenza/steerSession`` (the person's message into a running prompt turn) and the agent's
plan (``update_plan`` → ACP ``plan`` updates), driven by the SDK's client side over the stdio of
``cadenza acp`` against the scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.acp.conftest import WAIT_S, Start
from tests.acp.test_acp import wait_for_requests
from tests.support.fake_openai import FakeOpenAI, Reply, assert_tool_calls_answered, text, tool_call

STEER = "cadenza/steerSession"  # sent as ``_cadenza/steerSession``
REQUEST_FAILED = -32803
INVALID_PARAMS = -32602


def plan(*entries: tuple[str, str], call_id: str, delay_s: float = 0.0) -> Reply:
    items = [{"content": c, "status": s} for c, s in entries]
    return Reply(
        tool_calls=[tool_call("update_plan", {"entries": items}, call_id)], delay_s=delay_s
    )


def plans(updates: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    return [
        [(e["content"], e["status"]) for e in u["entries"]]
        for u in updates
        if u["sessionUpdate"] == "plan"
    ]


async def test_a_steer_reaches_the_running_turn_and_the_plan_is_shown(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(
        plan(("Find the bug", "in_progress"), ("Fix it", "pending"), call_id="p1"),
        # Held back: the person steers while this request runs.
        plan(("Find the bug", "completed"), ("Fix it", "in_progress"), call_id="p2", delay_s=2),
        text("Fixed, and the log line is gone."),
    )
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    prompt = asyncio.create_task(
        agent.conn.prompt(session_id=sid, prompt=[text_block("fix the bug")])
    )
    await wait_for_requests(fake, 2)
    result = await agent.conn.ext_method(STEER, {"sessionId": sid, "text": "drop the log line"})
    assert result == {"steered": True}
    response = await asyncio.wait_for(prompt, WAIT_S)
    assert response.stop_reason == "end_turn"

    assert len(fake.requests) == 3
    third = fake.requests[2]
    assert_tool_calls_answered(third)
    last = third["messages"][-1]
    assert (last["role"], last["content"]) == ("user", "drop the log line")
    updates = agent.peer.updates(sid)
    assert plans(updates) == [
        [("Find the bug", "in_progress"), ("Fix it", "pending")],
        [("Find the bug", "completed"), ("Fix it", "in_progress")],
    ]
    entry = next(u for u in updates if u["sessionUpdate"] == "plan")["entries"][0]
    assert entry["priority"] == "medium"  # ACP requires one
    assert "update_plan" not in str([u for u in updates if u["sessionUpdate"] == "tool_call"])

    # Between turns nothing runs: the steer is refused, and nothing reaches the model.
    with pytest.raises(RequestError) as refused:
        await agent.conn.ext_method(STEER, {"sessionId": sid, "text": "too late"})
    assert refused.value.code == REQUEST_FAILED
    assert "no turn running" in str(refused.value)
    with pytest.raises(RequestError) as unknown:
        await agent.conn.ext_method(STEER, {"sessionId": "nope", "text": "hi"})
    assert unknown.value.code == REQUEST_FAILED
    with pytest.raises(RequestError) as blank:
        await agent.conn.ext_method(STEER, {"sessionId": sid, "text": " "})
    assert blank.value.code == INVALID_PARAMS
    with pytest.raises(RequestError) as missing:
        await agent.conn.ext_method("cadenza/nothingLikeThis", {})
    assert missing.value.code == -32601
    assert len(fake.requests) == 3


async def test_a_steer_before_the_model_answers_keeps_the_turn_going(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(Reply(content="Done.", delay_s=2), text("Done, in French too."))
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("greet")]))
    await wait_for_requests(fake, 1)
    await agent.conn.ext_method(STEER, {"sessionId": sid, "text": "in French too"})
    response = await asyncio.wait_for(prompt, WAIT_S)
    assert response.stop_reason == "end_turn"
    assert len(fake.requests) == 2
    last = fake.requests[1]["messages"][-1]
    assert (last["role"], last["content"]) == ("user", "in French too")
