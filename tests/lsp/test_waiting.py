"""``needs_user_input`` through the real server: the prompt, the answer, ``replySession``.

The session asks (``cadenza/askUser`` or the ``showMessageRequest`` fallback), then resumes in
the same conversation with the answer as a new user message.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.support.fake_openai import (
    FakeOpenAI,
    assert_tool_calls_answered,
    call,
    person_messages,
    text,
)

MISSING = "the name of the new function"
WHY = "two names fit equally well"
ASK = {"status": "needs_user_input", "summary": "", "missing_info": MISSING, "why_no_default": WHY}


def user_texts(request: dict[str, Any]) -> list[str]:
    return person_messages(request)


async def wait_for(predicate: Any, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)


async def ends(editor: Harness, session_id: str, count: int) -> list[dict[str, Any]]:
    """Wait until the session has sent ``count`` ``session_end`` updates; return them."""

    def found() -> list[dict[str, Any]]:
        return [
            u for u in editor.updates.get(session_id, []) if u["sessionUpdate"] == "session_end"
        ]

    await wait_for(lambda: len(found()) >= count)
    return found()


async def test_needs_user_input_asks_and_the_answer_resumes(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect(caps=capabilities(ask_user=True))
    editor.answers.append("compute_total")
    fake.script(call("complete", ASK, "c1"), text("Renamed to compute_total."))
    session_id = await editor.start("rename the function")

    first, second = await ends(editor, session_id, 2)
    assert first["stopReason"] == "needs_user_input"
    assert first["missingInfo"] == MISSING
    assert first["whyNoDefault"] == WHY
    end_reports = [
        r
        for reports in editor.client.progress_reports.values()
        for r in reports
        if getattr(r, "kind", "") == "end"
    ]
    assert end_reports[0].message == f"needs_user_input: {MISSING}"
    assert editor.ask_requests == [
        {"sessionId": session_id, "question": MISSING, "whyNoDefault": WHY}
    ]
    assert second["stopReason"] == "end_turn"
    assert second["message"] == "Renamed to compute_total."
    kinds = editor.kinds(session_id)
    assert kinds.index("session_resume") > kinds.index("session_end")
    resume = next(u for u in editor.updates[session_id] if u["sessionUpdate"] == "session_resume")
    assert resume == {
        "sessionUpdate": "session_resume",
        "after": "needs_user_input",
        "reply": "compute_total",
        "kind": "answer",
    }
    # The same conversation goes on: the task, the complete call answered, then the answer.
    resumed = fake.requests[1]
    assert_tool_calls_answered(resumed)
    assert user_texts(resumed)[0] == "rename the function"
    assert (
        user_texts(resumed)[-1] == f"The person answered your question ({MISSING}): compute_total"
    )


async def test_fallback_answer_in_the_panel_then_reply_session(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect(caps=capabilities(ask_user=False))
    editor.message_choice = "Answer in the agent panel"
    fake.script(call("complete", ASK, "c1"), text("done"))
    session_id = await editor.start("rename the function")
    await ends(editor, session_id, 1)
    await wait_for(lambda: len(editor.message_requests) == 1)
    [request] = editor.message_requests
    assert MISSING in request.message and WHY in request.message
    assert [a.title for a in request.actions or []] == ["Answer in the agent panel"]

    listed = await editor.execute("cadenza.listSessions", {})
    [info] = [s for s in listed["sessions"] if s["sessionId"] == session_id]
    assert info["state"] == "needs_user_input"
    assert info["question"] == MISSING

    result = await editor.execute(
        "cadenza.replySession", {"sessionId": session_id, "text": "total_of"}
    )
    assert result == {"resumed": True, "state": "running"}
    _, second = await ends(editor, session_id, 2)
    assert second["stopReason"] == "end_turn"
    assert user_texts(fake.requests[1])[-1].endswith(": total_of")


async def test_reply_session_errors(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect()
    with pytest.raises(JsonRpcException) as unknown:
        await editor.execute("cadenza.replySession", {"sessionId": "nope", "text": "x"})
    assert unknown.value.code == -32803
    assert "unknown session" in str(unknown.value)
    with pytest.raises(JsonRpcException) as bad:
        await editor.execute("cadenza.replySession", {"sessionId": "x"})
    assert bad.value.code == -32602
    with pytest.raises(JsonRpcException) as unsafe:
        await editor.execute("cadenza.loadSession", {"sessionId": "../../etc/passwd"})
    assert unsafe.value.code == -32803

    # A session that ended with an answer does not wait for a reply.
    fake.script(text("all done"))
    session_id, _ = await editor.run("say done")
    with pytest.raises(JsonRpcException) as over:
        await editor.execute("cadenza.replySession", {"sessionId": session_id, "text": "x"})
    assert over.value.code == -32803
    assert "not waiting" in str(over.value)


async def test_cancel_a_waiting_session_withdraws_its_prompt(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect(caps=capabilities(ask_user=True))
    gate = asyncio.Event()
    original = editor._on_ask_user

    async def slow(params: dict[str, Any]) -> dict[str, Any]:
        editor.ask_requests.append(params)
        await gate.wait()
        return {"answer": "too late"}

    editor.client.protocol.fm.features.pop("cadenza/askUser", None)
    editor.client.feature("cadenza/askUser")(slow)
    del original
    fake.script(call("complete", ASK, "c1"))
    session_id = await editor.start("rename the function")
    await wait_for(lambda: len(editor.ask_requests) == 1)

    result = await editor.execute("cadenza.cancelSession", {"sessionId": session_id})
    assert result == {"cancelled": True}
    _, last = await ends(editor, session_id, 2)
    assert last["stopReason"] == "cancelled"
    gate.set()  # the person answers after the cancel: nothing resumes
    await asyncio.sleep(0.3)
    assert editor.kinds(session_id)[-1] == "session_end"
    assert len(fake.requests) == 1


async def test_replies_that_would_break_the_session_are_refused(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect(caps=capabilities(ask_user=True))
    editor.answers.append("   ")  # a blank answer in the prompt is a decline: it keeps waiting
    fake.script(call("complete", ASK, "c1"), text("done"))
    session_id = await editor.start("rename the function")
    await ends(editor, session_id, 1)
    await wait_for(lambda: len(editor.ask_requests) == 1)
    refusals = [
        ({"sessionId": session_id, "text": "bad \ud800 surrogate"}, -32602),
        ({"sessionId": session_id, "text": "x" * 20_001}, -32602),
        ({"sessionId": session_id, "text": "  "}, -32803),
    ]
    for argument, code in refusals:
        with pytest.raises(JsonRpcException) as refused:
            await editor.execute("cadenza.replySession", argument)
        assert refused.value.code == code
    # Still waiting, and a proper answer resumes it.
    listed = await editor.execute("cadenza.listSessions", {})
    [info] = [s for s in listed["sessions"] if s["sessionId"] == session_id]
    assert info["state"] == "needs_user_input"
    await editor.execute("cadenza.replySession", {"sessionId": session_id, "text": "ok"})
    _, second = await ends(editor, session_id, 2)
    assert second["stopReason"] == "end_turn"
