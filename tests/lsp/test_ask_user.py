"""``ask_user``: ``cadenza/askUser`` for declared clients, ``showMessageRequest`` otherwise."""

from __future__ import annotations

import pytest

from tests.lsp.conftest import Connect
from tests.lsp.harness import capabilities
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

QUESTION = "Which colour should the button be?"


async def test_ask_user_round_trip(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect(caps=capabilities(ask_user=True))
    editor.answers.append("blue")
    fake.script(call("ask_user", {"question": QUESTION}, "c1"), text("Painting it blue."))
    session_id, end = await editor.run("paint the button")

    assert end["stopReason"] == "end_turn"
    assert editor.ask_requests == [{"sessionId": session_id, "question": QUESTION}]
    assert editor.message_requests == []
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == "The person answered: blue"


async def test_ask_user_null_answer_is_a_decline(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect(caps=capabilities(ask_user=True))
    editor.answers.append(None)
    fake.script(call("ask_user", {"question": QUESTION}, "c1"), text("ok"))
    await editor.run("paint")
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == "The person declined to answer. Use your best judgement."


@pytest.mark.parametrize(
    ("choice", "result"),
    [
        ("Yes", "The person answered: Yes"),
        ("Skip", "The person declined to answer. Use your best judgement."),
        (None, "The person declined to answer. Use your best judgement."),
    ],
)
async def test_show_message_request_fallback(
    connect: Connect, fake: FakeOpenAI, choice: str | None, result: str
) -> None:
    editor = await connect(caps=capabilities(ask_user=False))
    editor.message_choice = choice
    fake.script(call("ask_user", {"question": QUESTION}, "c1"), text("ok"))
    await editor.run("paint")

    assert editor.ask_requests == []
    [request] = editor.message_requests
    assert request.message == QUESTION
    assert [a.title for a in request.actions or []] == ["Yes", "No", "Skip"]
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == result
