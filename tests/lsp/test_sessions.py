"""Sessions end to end: startSession, progress, session updates, stop reasons, cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    assert_tool_calls_answered,
    call,
    text,
    tool_messages,
)


async def wait_for(condition: object, timeout: float = 10.0) -> None:
    async def poll() -> None:
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


async def test_session_runs_with_progress_and_updates(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    fake.script(
        Reply(delay_s=0.5, tool_calls=call("read_file", {"path": "a.py"}, "c1").tool_calls),
        text("All done."),
    )
    session_id = await editor.start("Read a.py")
    # the result came back while the model was still thinking
    assert len(session_id) == 32
    assert "session_end" not in editor.kinds(session_id)

    end = await editor.wait_end(session_id)
    assert end == {
        "sessionUpdate": "session_end",
        "stopReason": "end_turn",
        "message": "All done.",
        "steps": 2,
    }
    movement, *updates = editor.updates[session_id]
    assert movement == {
        "sessionUpdate": "movement",
        "workflow": "default",
        "movement": "work",
        "index": 1,
        "reason": "",
    }
    replies = [u for u in updates if u["sessionUpdate"] == "model_reply"]
    assert [(r["step"], r["toolCalls"], r["finishReason"]) for r in replies] == [
        (1, 1, "tool_calls"),
        (2, 0, "stop"),
    ]
    updates = [u for u in updates if u["sessionUpdate"] != "model_reply"]
    assert [u["sessionUpdate"] for u in updates] == [
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
        "session_end",
    ]
    assert updates[0] == {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "name": "read_file",
        "title": "reading a.py",
        "kind": "read",
        "status": "in_progress",
        "rawInput": {"path": "a.py"},
    }
    assert updates[1]["toolCallId"] == "c1"
    assert updates[1]["status"] == "completed"
    [content] = updates[1]["content"]
    assert content["type"] == "content"
    assert content["content"]["type"] == "text"
    assert "x = 1" in content["content"]["text"]
    assert updates[2] == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "All done."},
    }

    # progress: begin with the task, a report per step and per tool call, end with the outcome
    [(token, reports)] = editor.client.progress_reports.items()
    assert isinstance(token, str)
    begin, *middle, finish = reports
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert (begin.title, begin.message) == ("Cadenza", "Read a.py")
    assert [r.message for r in middle] == ["work · step 1/25", "reading a.py", "work · step 2/25"]
    assert isinstance(finish, types.WorkDoneProgressEnd)
    assert finish.message == "end_turn: All done."

    # the model saw the tool result, answered in order
    assert len(fake.requests) == 2
    assert fake.requests[0]["model"] == "test"
    assert_tool_calls_answered(fake.requests[1])
    [tool] = tool_messages(fake.requests[1])
    assert tool["tool_call_id"] == "c1"
    assert "x = 1" in tool["content"]


async def test_client_work_done_token_is_used(editor: Harness, fake: FakeOpenAI) -> None:
    fake.script(text("Nothing to do."))
    editor.client.progress_reports["client-token"] = []
    result = await editor.execute(
        "cadenza.startSession", {"task": "noop", "model": "openai/test"}, token="client-token"
    )
    await editor.wait_end(result["sessionId"])
    assert list(editor.client.progress_reports) == ["client-token"]
    reports = editor.client.progress_reports["client-token"]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "end_turn: Nothing to do."


async def test_max_steps_ends_the_session(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    editor = await connect(init_options={"maxSteps": 2})
    fake.script(
        call("read_file", {"path": "a.py"}, "c1"),
        call("list_files", {}, "c2"),
        text("never reached"),
    )
    _, end = await editor.run("loop")
    assert end["stopReason"] == "max_steps"
    assert end["steps"] == 2
    assert len(fake.requests) == 2


async def test_provider_errors_end_the_session_with_error(
    editor: Harness, fake: FakeOpenAI
) -> None:
    fake.script(*[Reply(status=500)] * 4)
    session_id, end = await editor.run("fail")
    assert end["stopReason"] == "error"
    assert "HTTP 500" in end["message"]
    assert "4 attempts" in end["message"]
    assert len(fake.requests) == 4
    [reports] = editor.client.progress_reports.values()
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message is not None and reports[-1].message.startswith("error: ")
    assert editor.kinds(session_id) == ["movement", "session_end"]


async def test_cancel_session(editor: Harness, fake: FakeOpenAI) -> None:
    fake.script(Reply(delay_s=30, content="too late"))
    session_id = await editor.start("wait")
    await wait_for(lambda: len(fake.requests) == 1)
    result = await editor.execute("cadenza.cancelSession", {"sessionId": session_id})
    assert result == {"cancelled": True}
    end = await editor.wait_end(session_id)
    assert end["stopReason"] == "cancelled"
    [reports] = editor.client.progress_reports.values()
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "cancelled"
    # a finished or unknown session cannot be cancelled
    again = await editor.execute("cadenza.cancelSession", {"sessionId": session_id})
    assert again == {"cancelled": False}
    unknown = await editor.execute("cadenza.cancelSession", {"sessionId": "nope"})
    assert unknown == {"cancelled": False}


async def test_progress_cancel_cancels_the_session(editor: Harness, fake: FakeOpenAI) -> None:
    fake.script(Reply(delay_s=30, content="too late"))
    session_id = await editor.start("wait")
    await wait_for(lambda: len(fake.requests) == 1)
    [token] = editor.client.progress_reports
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    end = await editor.wait_end(session_id)
    assert end["stopReason"] == "cancelled"


async def test_model_from_initialization_options(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect(
        init_options={"model": "openai/from-options"}, user_config={"model": "openai/mine"}
    )
    fake.script(text("ok"))
    _, end = await editor.run("hi", model=None)
    assert end["stopReason"] == "end_turn"
    assert fake.requests[0]["model"] == "from-options"


async def test_start_session_model_beats_initialization_options(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect(init_options={"model": "bogus/x"})
    fake.script(text("ok"))
    _, end = await editor.run("hi", model="openai/explicit")
    assert end["stopReason"] == "end_turn"
    assert fake.requests[0]["model"] == "explicit"


async def test_history_stays_valid_across_tool_calls(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    fake.script(
        Reply(
            tool_calls=[
                *call("read_file", {"path": "a.py"}, "c1").tool_calls,
                *call("nope", {}, "c2").tool_calls,
            ]
        ),
        call("search", {"pattern": "x"}, "c3"),
        text("done"),
    )
    _, end = await editor.run("look around")
    assert end["stopReason"] == "end_turn"
    assert len(fake.requests) == 3
    for request in fake.requests:
        assert_tool_calls_answered(request)
    ids = [m["tool_call_id"] for m in tool_messages(fake.requests[2])]
    assert ids == ["c1", "c2", "c3"]
    unknown = next(m for m in tool_messages(fake.requests[2]) if m["tool_call_id"] == "c2")
    assert "unknown tool" in unknown["content"]
    assert fake.requests[0]["messages"][2] == {"role": "user", "content": "look around"}


async def test_no_progress_without_the_capability(connect: Connect, fake: FakeOpenAI) -> None:
    editor = await connect(caps=capabilities(progress=False))
    fake.script(text("quiet"))
    _, end = await editor.run("hi")
    assert end["stopReason"] == "end_turn"
    assert editor.client.progress_reports == {}


async def test_concurrent_sessions_are_kept_apart(editor: Harness, fake: FakeOpenAI) -> None:
    fake.script(Reply(content="one", delay_s=0.3), text("two"))
    first = await editor.start("first")
    await wait_for(lambda: len(fake.requests) == 1)
    second = await editor.start("second")
    ends = await asyncio.gather(editor.wait_end(first), editor.wait_end(second))
    assert [e["message"] for e in ends] == ["one", "two"]
    assert editor.kinds(first) == ["movement", "agent_message_chunk", "session_end"]
    assert editor.kinds(second) == ["movement", "agent_message_chunk", "session_end"]
    assert len(editor.client.progress_reports) == 2
    begins = sorted(r[0].message for r in editor.client.progress_reports.values())
    assert begins == ["first", "second"]
