"""Call ids through the real server: a model that reuses ``call_0`` every turn and
sends an empty id once still gives the client one distinct ``toolCallId`` per call, live, in a
replayed transcript, and after the session is revived."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities, stop_harness
from tests.lsp.test_waiting import ASK, ends, wait_for
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


def assert_each_update_follows_its_call(updates: list[dict[str, Any]]) -> None:
    """Every ``tool_call_update`` comes after the ``tool_call`` with its id, one for each."""
    announced: list[str] = []
    for update in updates:
        if update["sessionUpdate"] == "tool_call":
            assert update["toolCallId"] not in announced, update
            announced.append(update["toolCallId"])
        elif update["sessionUpdate"] == "tool_call_update":
            assert update["toolCallId"] in announced, update
    assert sorted(call_ids(updates, "tool_call_update")) == sorted(announced)


async def test_reused_and_empty_call_ids_reach_the_client_distinct(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    first = await connect(caps=capabilities(ask_user=True, request_permission=True))
    first.answers.append(None)  # the question waits (and outlives the server)
    fake.script(
        call("list_files", {"path": "."}, "call_0"),
        call("read_file", {"path": "a.py"}, "call_0"),
        Reply(tool_calls=[tool_call("search", {"query": "x"}, "")]),
        call("run_command", {"command": "true"}, "call_0"),
        call("complete", ASK, "call_0"),
    )
    session_id = await first.start("look around")
    [end] = await ends(first, session_id, 1)
    assert end["stopReason"] == "needs_user_input"
    await wait_for(lambda: len(first.ask_requests) == 1)

    live = list(first.updates[session_id])
    started = call_ids(live, "tool_call")
    assert len(started) == 5 and len(set(started)) == 5
    assert started[0] == "call_0"
    assert_each_update_follows_its_call(live)
    [permission] = first.permission_requests
    assert permission["toolCall"]["toolCallId"] == started[3]
    # What the model was sent: each call answered by exactly one result with its id.
    assert_tool_calls_answered(fake.requests[-1])
    sent = [c["id"] for m in fake.requests[-1]["messages"] for c in m.get("tool_calls") or []]
    assert sent == started[:4]
    await stop_harness(first)

    second = await connect(caps=capabilities(ask_user=False))
    await second.execute("cadenza.loadSession", {"sessionId": session_id})
    replayed = list(second.updates[session_id])
    assert call_ids(replayed, "tool_call") == started
    assert_each_update_follows_its_call(replayed)

    fake.script(call("search", {"query": "y"}, "call_0"), text("found it"))
    await second.execute("cadenza.replySession", {"sessionId": session_id, "text": "go on"})
    *_, end = await ends(second, session_id, 2)
    assert end["stopReason"] == "end_turn"
    resumed = list(second.updates[session_id])[len(replayed) :]
    [new_id] = call_ids(resumed, "tool_call")
    assert new_id not in started
    assert call_ids(resumed, "tool_call_update") == [new_id]
    assert_tool_calls_answered(fake.requests[-1])
