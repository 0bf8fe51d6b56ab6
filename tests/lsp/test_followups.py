"""Multi-turn sessions: ``cadenza.promptSession`` goes on in the same conversation (also after
a restart), ``cadenza.configureSession`` switches the model between turns."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities, file_uri, stop_harness
from tests.lsp.test_waiting import ASK, ends, user_texts, wait_for
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    assert_tool_calls_answered,
    call,
    text,
)

REQUEST_FAILED = -32803
INVALID_PARAMS = -32602


def roles_and_texts(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m.get("content") or "") for m in request["messages"]]


async def prompt(editor: Harness, session_id: str, words: str, **extra: Any) -> None:
    result = await editor.execute(
        "cadenza.promptSession", {"sessionId": session_id, "text": words, **extra}
    )
    assert result == {"sessionId": session_id}


async def test_three_turns_share_one_conversation(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    editor = await connect()
    fake.script(call("read_file", {"path": "app.py"}, "c1"), text("It sums a list."))
    session_id = await editor.start("what does total do?")
    [end] = await ends(editor, session_id, 1)
    assert end["stopReason"] == "end_turn"
    first = fake.requests[-1]

    fake.script(text("Call it total_of."))
    await prompt(editor, session_id, "suggest a better name, like you did above")
    *_, end = await ends(editor, session_id, 2)
    assert end["stopReason"] == "end_turn"
    second = fake.requests[-1]
    # Turn 2 sees turn 1: its messages come first, then the reply, then the new prompt.
    assert roles_and_texts(second)[: len(first["messages"])] == roles_and_texts(first)
    assert_tool_calls_answered(second)
    assert any(
        m["role"] == "assistant" and m.get("content") == "It sums a list."
        for m in second["messages"]
    )
    assert user_texts(second)[-1] == "suggest a better name, like you did above"

    fake.script(text("Done."))
    await prompt(editor, session_id, "thanks")
    *_, end = await ends(editor, session_id, 3)
    third = fake.requests[-1]
    texts = user_texts(third)
    assert texts[0] == "what does total do?"
    assert texts[-2:] == ["suggest a better name, like you did above", "thanks"]
    assert any(m.get("content") == "Call it total_of." for m in third["messages"])

    listed = await editor.execute("cadenza.listSessions", {})
    assert [s["state"] for s in listed["sessions"] if s["sessionId"] == session_id] == ["end_turn"]


async def test_a_follow_up_after_a_restart_goes_on_from_the_transcript(
    connect: Connect, fake: FakeOpenAI
) -> None:
    first = await connect()
    fake.script(text("The answer is 42."))
    session_id = await first.start("what is the answer?")
    await ends(first, session_id, 1)
    await stop_harness(first)

    second = await connect()
    fake.script(text("Because I said so."))
    await prompt(second, session_id, "why?")
    [end] = await ends(second, session_id, 1)
    assert end["stopReason"] == "end_turn"
    texts = user_texts(fake.requests[-1])
    assert texts[0] == "what is the answer?"
    assert texts[-1] == "why?"
    assert any(m.get("content") == "The answer is 42." for m in fake.requests[-1]["messages"])


async def test_the_context_reaches_the_model_with_the_unsaved_buffer(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("on disk\n")
    editor = await connect()
    fake.script(text("ok"))
    session_id = await editor.start("look")
    await ends(editor, session_id, 1)
    uri = editor.open(workspace / "a.py", "on disk\n")
    editor.change(workspace / "a.py", "unsaved text\n")
    context = {
        "selection": {
            "uri": uri,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 8}},
            "text": "unsaved",
        },
        "files": [uri, file_uri(workspace.parent / "outside.txt")],
        "problems": [{"uri": uri, "message": "undefined name", "severity": 1}],
    }
    fake.script(text("seen"))
    await prompt(editor, session_id, "fix this", context=context)
    await ends(editor, session_id, 2)
    sent = user_texts(fake.requests[-1])[-1]
    assert sent.startswith("fix this\n\nContext from the editor:")
    assert "The selection in a.py, line 1:" in sent
    assert "File a.py (the editor's buffer):\n```\nunsaved text\n```" in sent
    assert "not read (not in the workspace)" in sent
    assert "- a.py: error: undefined name" in sent


async def test_start_session_takes_the_same_context_as_a_follow_up(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    """A first message's mentions reach the model as context after the task, not in its text."""
    (workspace / "app.py").write_text("def total(xs):\n    return sum(xs)\n\nprint(total([1]))\n")
    (workspace / "notes.md").write_text("on disk\n")
    editor = await connect()
    uri = editor.open(workspace / "notes.md", "on disk\n")
    editor.change(workspace / "notes.md", "unsaved notes\n")
    app = file_uri(workspace / "app.py")
    where = {"start": {"line": 0, "character": 4}, "end": {"line": 1, "character": 18}}
    context = {
        "files": [uri],
        "symbols": [{"name": "total", "uri": app, "range": where}],
        "problems": [{"uri": app, "message": "missing type hints", "severity": 2}],
    }
    fake.script(text("seen"))
    editor.client.progress_reports["first"] = []
    started = await editor.execute(
        "cadenza.startSession",
        {"task": "add type hints", "model": "openai/test", "context": context},
        token="first",
    )
    session_id = started["sessionId"]
    await ends(editor, session_id, 1)
    # The progress shows what the person wrote, not the context blocks after it.
    begin = editor.client.progress_reports["first"][0]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.message == "add type hints"
    sent = user_texts(fake.requests[-1])[-1]
    assert sent.startswith("add type hints\n\nContext from the editor:"), sent
    assert "File notes.md (the editor's buffer):\n```\nunsaved notes\n```" in sent
    assert "def total(xs):\n    return sum(xs)" in sent
    assert "- app.py: warning: missing type hints" in sent
    # A bad context is refused like a follow-up's, and starts nothing.
    with pytest.raises(JsonRpcException) as refused:
        await editor.start("x", context={"files": "not a list"})
    assert refused.value.code == INVALID_PARAMS
    assert len(fake.requests) == 1


async def test_configure_switches_the_model_from_the_next_turn(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect()
    fake.script(text("one"))
    session_id = await editor.start("hi")
    await ends(editor, session_id, 1)
    assert fake.requests[-1]["model"] == "test"
    result = await editor.execute(
        "cadenza.configureSession", {"sessionId": session_id, "model": "openai/other"}
    )
    assert result == {"sessionId": session_id, "model": "openai/other", "workflow": "default"}
    fake.script(text("two"))
    editor.client.progress_reports["turn-2"] = []
    await editor.execute(
        "cadenza.promptSession", {"sessionId": session_id, "text": "again"}, token="turn-2"
    )
    await ends(editor, session_id, 2)
    assert fake.requests[-1]["model"] == "other"
    reports = editor.client.progress_reports["turn-2"]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert reports[0].message == "again"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    # The second turn's first step is its step 1 of its own budget, not the session's step 2.
    steps = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert any(m and m.endswith("step 1/25") for m in steps), steps
    assert user_texts(fake.requests[-1])[0] == "hi"


async def test_configure_refuses_an_unknown_model_or_workflow_and_changes_nothing(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect()
    fake.script(text("one"))
    session_id = await editor.start("hi")
    await ends(editor, session_id, 1)
    for change in ({"model": "nope/x"}, {"model": "no-slash"}, {"workflow": "no-such-flow"}):
        with pytest.raises(JsonRpcException) as raised:
            await editor.execute("cadenza.configureSession", {"sessionId": session_id, **change})
        assert raised.value.code == INVALID_PARAMS
    with pytest.raises(JsonRpcException) as raised:
        await editor.execute(
            "cadenza.configureSession", {"sessionId": "f" * 32, "model": "openai/x"}
        )
    assert raised.value.code == REQUEST_FAILED
    fake.script(text("two"))
    await prompt(editor, session_id, "again")
    await ends(editor, session_id, 2)
    assert fake.requests[-1]["model"] == "test"


async def test_prompt_refuses_a_running_or_unknown_session(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect()
    with pytest.raises(JsonRpcException) as raised:
        await editor.execute("cadenza.promptSession", {"sessionId": "f" * 32, "text": "hi"})
    assert raised.value.code == REQUEST_FAILED
    assert "unknown session" in str(raised.value)
    with pytest.raises(JsonRpcException) as raised:
        await editor.execute("cadenza.promptSession", {"sessionId": "abc", "text": "  "})
    assert raised.value.code == INVALID_PARAMS

    fake.script(Reply(content="slow", delay_s=1.0))  # the session runs meanwhile
    session_id = await editor.start("take your time")
    await wait_for(lambda: len(fake.requests) >= 1)
    with pytest.raises(JsonRpcException) as raised:
        await editor.execute("cadenza.promptSession", {"sessionId": session_id, "text": "more"})
    assert raised.value.code == REQUEST_FAILED
    assert "is running" in str(raised.value)
    await ends(editor, session_id, 1)


async def test_prompt_answers_a_session_that_asked(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect(caps=capabilities(ask_user=True))
    editor.answers.append(None)  # the person does not answer the prompt
    fake.script(call("complete", ASK, "c1"))
    session_id = await editor.start("rename total")
    await ends(editor, session_id, 1)
    await wait_for(lambda: len(editor.ask_requests) == 1)
    await asyncio.sleep(0.1)
    fake.script(text("Renamed."))
    await prompt(editor, session_id, "total_of")
    *_, end = await ends(editor, session_id, 2)
    assert end["stopReason"] == "end_turn"
    assert user_texts(fake.requests[-1])[-1].endswith(": total_of")


def test_prompt_and_configure_are_advertised() -> None:
    from cadenza.lsp.server import create_server

    server = create_server()
    names = set(server.protocol.fm.commands)
    assert {"cadenza.promptSession", "cadenza.configureSession"} <= names


async def test_a_session_stopped_by_its_step_bound_takes_a_follow_up(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    editor = await connect(init_options={"maxSteps": 1})
    fake.script(call("read_file", {"path": "a.py"}, "c1"))
    session_id = await editor.start("look at a.py")
    [end] = await ends(editor, session_id, 1)
    assert end["stopReason"] == "max_steps"
    fake.script(text("x is 1."))
    await prompt(editor, session_id, "go on")
    *_, end = await ends(editor, session_id, 2)
    assert end["stopReason"] == "end_turn"
    assert_tool_calls_answered(fake.requests[-1])
    resumes = [u for u in editor.updates[session_id] if u["sessionUpdate"] == "session_resume"]
    assert [(u["after"], u["reply"], u["kind"]) for u in resumes] == [
        ("max_steps", "go on", "prompt")
    ]
