"""Sessions outlive the server: ``listSessions``, ``loadSession``'s replay, and a reply after
a restart resuming a session that waited for input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities, stop_harness
from tests.lsp.test_waiting import ASK, MISSING, ends, user_texts, wait_for
from tests.support.fake_openai import FakeOpenAI, assert_tool_calls_answered, call, text


async def test_restart_then_load_replays_and_a_reply_resumes(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    first = await connect(caps=capabilities(ask_user=True))
    first.answers.append(None)  # the person does not answer now
    fake.script(
        call("read_file", {"path": "app.py"}, "c1"),
        call("complete", ASK, "c2"),
    )
    session_id = await first.start("rename total")
    await ends(first, session_id, 1)
    await wait_for(lambda: len(first.ask_requests) == 1)
    live_updates = list(first.updates[session_id])
    await stop_harness(first)  # the server exits; the session waits on disk

    second = await connect(caps=capabilities(ask_user=False))
    listed = await second.execute("cadenza.listSessions", {})
    [info] = [s for s in listed["sessions"] if s["sessionId"] == session_id]
    assert info["state"] == "needs_user_input"
    assert info["task"] == "rename total"
    assert info["question"] == MISSING
    assert info["root"] == str(workspace)

    result = await second.execute("cadenza.loadSession", {"sessionId": session_id})
    replayed: list[dict[str, Any]] = list(second.updates[session_id])
    # The notifications came before the response, in the transcript's order.
    assert result["updates"] == len(replayed)
    assert result["session"]["state"] == "needs_user_input"
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds[0] == "user_message_chunk"
    assert replayed[0]["content"]["text"] == "rename total"
    live_kinds = [
        u["sessionUpdate"] for u in live_updates if u["sessionUpdate"] != "agent_message_chunk"
    ]
    assert [k for k in kinds if k != "user_message_chunk"] == live_kinds
    read_result = next(
        u for u in replayed if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == "c1"
    )
    assert "return sum(xs)" in read_result["content"][0]["content"]["text"]
    assert replayed[-1]["sessionUpdate"] == "session_end"
    assert replayed[-1]["stopReason"] == "needs_user_input"

    fake.script(text("Renamed to total_of."))
    reply = await second.execute(
        "cadenza.replySession", {"sessionId": session_id, "text": "total_of"}
    )
    assert reply == {"resumed": True, "state": "running"}
    *_, end = await ends(second, session_id, 2)
    assert end["stopReason"] == "end_turn"
    resumed = fake.requests[-1]
    assert_tool_calls_answered(resumed)
    texts = user_texts(resumed)
    assert texts[0] == "rename total"
    assert texts[-1].endswith(": total_of")
    tool_ids = [m.get("tool_call_id") for m in resumed["messages"] if m["role"] == "tool"]
    assert tool_ids == ["c1", "c2"]

    listed = await second.execute("cadenza.listSessions", {})
    [info] = [s for s in listed["sessions"] if s["sessionId"] == session_id]
    assert info["state"] == "end_turn"


async def test_reply_without_load_after_restart(connect: Connect, fake: FakeOpenAI) -> None:
    first = await connect(caps=capabilities(ask_user=True))
    fake.script(call("complete", ASK, "c1"))
    session_id = await first.start("rename total")
    await ends(first, session_id, 1)
    await stop_harness(first)

    second = await connect()
    fake.script(text("ok"))
    await second.execute("cadenza.replySession", {"sessionId": session_id, "text": "x"})
    [end] = await ends(second, session_id, 1)
    assert end["stopReason"] == "end_turn"


async def test_undo_after_a_restart_and_resume_restores_both_runs(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("a = 1\n")
    (workspace / "b.py").write_text("b = 1\n")
    first = await connect(caps=capabilities(ask_user=True))
    first.autosave = True
    fake.script(
        call("edit_file", {"path": "a.py", "old_string": "1", "new_string": "2"}, "c1"),
        call("complete", ASK, "c2"),
    )
    session_id = await first.start("change both")
    await ends(first, session_id, 1)
    await stop_harness(first)
    assert (workspace / "a.py").read_text() == "a = 2\n"

    second = await connect()
    second.autosave = True
    fake.script(
        call("edit_file", {"path": "b.py", "old_string": "1", "new_string": "2"}, "c3"),
        text("both changed"),
    )
    await second.execute("cadenza.replySession", {"sessionId": session_id, "text": "go"})
    await ends(second, session_id, 1)
    assert (workspace / "b.py").read_text() == "b = 2\n"

    result = await second.execute("cadenza.undoSession", {"sessionId": session_id})
    assert sorted(f["path"] for f in result["files"]) == ["a.py", "b.py"]
    assert (workspace / "a.py").read_text() == "a = 1\n"
    assert (workspace / "b.py").read_text() == "b = 1\n"


async def test_a_session_waiting_in_one_server_is_not_resumed_by_another(
    connect: Connect, fake: FakeOpenAI
) -> None:
    first = await connect(caps=capabilities(ask_user=True))
    fake.script(call("complete", ASK, "c1"))
    session_id = await first.start("rename total")
    await ends(first, session_id, 1)

    second = await connect()  # a second editor window on the same state folder
    with pytest.raises(JsonRpcException) as refused:
        await second.execute("cadenza.replySession", {"sessionId": session_id, "text": "x"})
    assert refused.value.code == -32803
    assert "another Cadenza server" in str(refused.value)
    loaded = await second.execute("cadenza.loadSession", {"sessionId": session_id})
    assert loaded["session"]["state"] == "needs_user_input"  # replayed, not revived

    await stop_harness(first)  # the lock goes with the first server
    fake.script(text("ok"))
    await second.execute("cadenza.replySession", {"sessionId": session_id, "text": "x"})
    *_, end = await ends(second, session_id, 2)
    assert end["stopReason"] == "end_turn"
