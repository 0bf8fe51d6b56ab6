"""Steering a running turn (``cadenza.steerSession``) and the agent's plan (``update_plan`` →
``cadenza/sessionUpdate`` kind ``plan``), against the real server over its pipes and the
scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness
from tests.lsp.test_waiting import ends, user_texts, wait_for
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    assert_tool_calls_answered,
    call,
    text,
    tool_call,
)

REQUEST_FAILED = -32803
INVALID_PARAMS = -32602
STEER = "cadenza.steerSession"


def plan(*entries: tuple[str, str], call_id: str, delay_s: float = 0.0) -> Reply:
    """A reply with one ``update_plan`` call of ``(content, status)`` entries."""
    items = [{"content": c, "status": s} for c, s in entries]
    return Reply(
        tool_calls=[tool_call("update_plan", {"entries": items}, call_id)], delay_s=delay_s
    )


def plans(editor: Harness, session_id: str) -> list[list[dict[str, Any]]]:
    return [
        u["entries"] for u in editor.updates.get(session_id, []) if u["sessionUpdate"] == "plan"
    ]


def tool_names(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


async def test_a_steer_reaches_the_running_turn_at_its_next_step(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    fake.script(
        call("read_file", {"path": "app.py"}, "c1"),
        # Held back: the steer arrives while this request runs.
        Reply(tool_calls=[tool_call("list_files", {"path": "."}, "c2")], delay_s=2.0),
        text("Done, with tabs."),
    )
    session_id = await editor.start("tidy app.py")
    await wait_for(lambda: len(fake.requests) >= 2)
    result = await editor.execute(STEER, {"sessionId": session_id, "text": "use tabs, not spaces"})
    assert result == {"steered": True}
    [end] = await ends(editor, session_id, 1)
    assert end["stopReason"] == "end_turn"
    assert len(fake.requests) == 3
    assert "use tabs" not in str(fake.requests[1]["messages"])
    third = fake.requests[2]
    assert_tool_calls_answered(third)
    # After the held step's tool result, before the next request: the person's message as is.
    last = third["messages"][-1]
    assert (last["role"], last["content"]) == ("user", "use tabs, not spaces")
    assert third["messages"][-2]["role"] == "tool"

    # Replayed, the steer is the person's message.
    fake.script()
    loaded = await editor.execute("cadenza.loadSession", {"sessionId": session_id})
    assert loaded["updates"] > 0
    said = [
        u["content"]["text"]
        for u in editor.updates[session_id]
        if u["sessionUpdate"] == "user_message_chunk"
    ]
    assert "use tabs, not spaces" in said


async def test_a_steer_keeps_the_turn_from_ending(editor: Harness, fake: FakeOpenAI) -> None:
    """The model answers while a steer waits: the turn goes on, and the model reads it."""
    fake.script(
        Reply(content="All done.", delay_s=2.0),
        text("Renamed it as well."),
    )
    session_id = await editor.start("say hi")
    await wait_for(lambda: len(fake.requests) >= 1)
    await editor.execute(STEER, {"sessionId": session_id, "text": "also rename it"})
    [end] = await ends(editor, session_id, 1)
    assert end["stopReason"] == "end_turn"
    assert end["message"] == "Renamed it as well."
    assert len(fake.requests) == 2
    assert user_texts(fake.requests[1])[-1] == "also rename it"


async def test_a_steer_without_a_running_turn_is_refused(editor: Harness, fake: FakeOpenAI) -> None:
    fake.script(text("Hello."))
    session_id, end = await editor.run("say hello")
    assert end["stopReason"] == "end_turn"
    await asyncio.sleep(0.2)  # the run's task lets the session go
    for session in (session_id, "no-such-session"):
        with pytest.raises(JsonRpcException) as refused:
            await editor.execute(STEER, {"sessionId": session, "text": "too late"})
        assert refused.value.code == REQUEST_FAILED
        assert "no turn running" in str(refused.value.message)
    with pytest.raises(JsonRpcException) as blank:
        await editor.execute(STEER, {"sessionId": session_id, "text": "   "})
    assert blank.value.code == INVALID_PARAMS
    assert len(fake.requests) == 1  # nothing more was sent to the model


async def test_the_plan_is_published_as_it_changes(editor: Harness, fake: FakeOpenAI) -> None:
    fake.script(
        plan(("Read the code", "in_progress"), ("Write the test", "pending"), call_id="p1"),
        plan(("Read the code", "completed"), ("Write the test", "in_progress"), call_id="p2"),
        # An invalid plan is an error result the model reads; nothing is published.
        plan(("Read the code", "finished"), call_id="p3"),
        text("Planned."),
    )
    session_id, end = await editor.run("plan it")
    assert end["stopReason"] == "end_turn"
    assert "update_plan" in tool_names(fake.requests[0])
    assert plans(editor, session_id) == [
        [
            {"content": "Read the code", "priority": "medium", "status": "in_progress"},
            {"content": "Write the test", "priority": "medium", "status": "pending"},
        ],
        [
            {"content": "Read the code", "priority": "medium", "status": "completed"},
            {"content": "Write the test", "priority": "medium", "status": "in_progress"},
        ],
    ]
    results = [m for m in fake.requests[3]["messages"] if m["role"] == "tool"]
    assert [r["content"] for r in results[:2]] == [
        "plan updated (0 of 2 done)",
        "plan updated (1 of 2 done)",
    ]
    assert results[2]["content"].startswith("invalid arguments for update_plan")
    # No tool_call update for the plan tool: the plan is the update.
    assert "tool_call" not in editor.kinds(session_id)


async def test_the_plan_setting_off_offers_no_plan_tool(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect(user_config={"loop": {"plan": False}})
    fake.script(text("Fine."))
    _, end = await editor.run("hello")
    assert end["stopReason"] == "end_turn"
    assert "update_plan" not in tool_names(fake.requests[0])
