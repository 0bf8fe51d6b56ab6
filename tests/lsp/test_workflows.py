"""Workflows through the real server: movements, control tools, stop reasons, workflow errors.

The model is the scripted fake OpenAI server; every request it received is checked against the
tool-call rule of strict OpenAI-compatible servers (their HTTP 400), as the live history crosses
movements.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from cadenza.engine.history import check_strict_wire
from cadenza.tools import freshness
from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    assert_tool_calls_answered,
    call,
    text,
    tool_call,
    tool_messages,
)

INVALID_PARAMS = -32602
PIR = "plan-implement-review"
SOURCE = "def greet():\n    return 'hi'\n"


def transition(next_movement: str, reason: str, call_id: str) -> dict[str, Any]:
    return tool_call("transition", {"next": next_movement, "reason": reason}, call_id)


def complete(call_id: str, status: str = "done", **fields: str) -> dict[str, Any]:
    summary = fields.pop("summary", "Renamed greet to welcome.")
    return tool_call("complete", {"status": status, "summary": summary, **fields}, call_id)


def rename(call_id: str) -> dict[str, Any]:
    arguments = {"path": "a.py", "old_string": "def greet", "new_string": "def welcome"}
    return tool_call("edit_file", arguments, call_id)


def movements(editor: Harness, session_id: str) -> list[dict[str, Any]]:
    return [u for u in editor.updates[session_id] if u["sessionUpdate"] == "movement"]


def starts_movement(message: dict[str, Any], name: str) -> bool:
    content = message.get("content")
    return (
        message["role"] == "user"
        and isinstance(content, str)
        and content.startswith(f"Movement {name!r} starts.")
    )


def first_request_of(fake: FakeOpenAI, name: str) -> dict[str, Any]:
    """The first request whose history holds the prompt that starts movement ``name``."""
    return next(r for r in fake.requests if any(starts_movement(m, name) for m in r["messages"]))


def tool_result(request: dict[str, Any], call_id: str) -> str:
    [message] = [m for m in tool_messages(request) if m["tool_call_id"] == call_id]
    return str(message["content"])


async def test_plan_implement_review_sends_movement_updates_in_order(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    fake.script(
        call("read_file", {"path": "a.py"}, "p1"),
        Reply(tool_calls=[transition("implement", "rename greet in a.py", "p2")]),
        Reply(tool_calls=[rename("i1")]),
        Reply(tool_calls=[transition("review", "a.py edited", "i2")]),
        Reply(tool_calls=[complete("r1")]),
    )
    session_id, end = await editor.run("Rename greet to welcome", workflow=PIR)

    assert end == {
        "sessionUpdate": "session_end",
        "stopReason": "end_turn",
        "message": "Renamed greet to welcome.",
        "steps": 5,
    }
    assert movements(editor, session_id) == [
        {
            "sessionUpdate": "movement",
            "workflow": PIR,
            "movement": "plan",
            "index": 1,
            "reason": "",
        },
        {
            "sessionUpdate": "movement",
            "workflow": PIR,
            "movement": "implement",
            "index": 2,
            "reason": "rename greet in a.py",
        },
        {
            "sessionUpdate": "movement",
            "workflow": PIR,
            "movement": "review",
            "index": 3,
            "reason": "a.py edited",
        },
    ]
    assert editor.kinds(session_id) == [
        "movement",
        *["tool_call", "tool_call_update"] * 2,  # read_file, transition
        "movement",
        *["tool_call", "tool_call_update", "tool_call_update"],  # edit_file: diff, result
        *["tool_call", "tool_call_update"],  # transition
        "movement",
        *["tool_call", "tool_call_update"],  # complete
        "session_end",
    ]
    assert editor.text_of(workspace / "a.py") == SOURCE.replace("def greet", "def welcome")

    # progress says which movement runs, on every step report
    [reports] = editor.client.progress_reports.values()
    steps = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert [s for s in steps if s and "step" in s] == [
        "plan · step 1/25",
        "plan · step 2/25",
        "implement · step 3/25",
        "implement · step 4/25",
        "review · step 5/25",
    ]
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "end_turn: Renamed greet to welcome."

    # each movement offers its own tools plus the control tools
    offered = [sorted(t["function"]["name"] for t in r["tools"]) for r in fake.requests]
    assert offered[0] == [
        "complete",
        "list_files",
        "read_file",
        "search",
        "transition",
        "update_plan",
    ]
    assert "edit_file" in offered[2]
    assert "edit_file" not in offered[4]


async def test_regression_no_dangling_control_calls_across_movements(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    """Every request holds a tool message for every tool call, control calls included.

    The conversation crosses a real ``transition`` in a batch (plan), a ``transition`` followed
    by a call it ends the movement before (implement), and a rejected ``complete`` (review):
    strict OpenAI-compatible servers answer HTTP 400 to a request with a call left unanswered.
    """
    (workspace / "a.py").write_text(SOURCE)
    fake.script(
        Reply(
            tool_calls=[
                tool_call("read_file", {"path": "a.py"}, "p1"),
                transition("implement", "rename greet", "p2"),
            ]
        ),
        Reply(
            tool_calls=[
                rename("i1"),
                transition("review", "done editing", "i2"),
                tool_call("read_file", {"path": "a.py"}, "i3"),
            ]
        ),
        Reply(tool_calls=[complete("r1", "needs_user_input", missing_info="nothing really")]),
        Reply(tool_calls=[complete("r2")]),
    )
    session_id, end = await editor.run("Rename greet to welcome", workflow=PIR)
    assert end["stopReason"] == "end_turn"
    assert [m["movement"] for m in movements(editor, session_id)] == [
        "plan",
        "implement",
        "review",
    ]

    assert len(fake.requests) == 4
    for request in fake.requests:
        check_strict_wire(request["messages"])  # raises StrictHistoryError (the HTTP 400)
        assert_tool_calls_answered(request)

    # the first request of each new movement: the transition is answered, then the movement
    implement = first_request_of(fake, "implement")
    assert implement is fake.requests[1]
    assert tool_result(implement, "p2") == "transition to 'implement' accepted"
    assert starts_movement(implement["messages"][-1], "implement")
    review = first_request_of(fake, "review")
    assert review is fake.requests[2]
    assert tool_result(review, "i2") == "transition to 'review' accepted"
    assert "not run" in tool_result(review, "i3")
    assert starts_movement(review["messages"][-1], "review")
    # the rejected complete is answered before the model is asked again
    assert "why_no_default" in tool_result(fake.requests[3], "r1")


async def test_needs_user_input_requires_why_no_default(editor: Harness, fake: FakeOpenAI) -> None:
    missing = "the new name of greet"
    why = "welcome and hello are equally plausible and the task names neither"
    fake.script(
        Reply(tool_calls=[complete("c1", "needs_user_input", missing_info=missing)]),
        Reply(
            tool_calls=[
                complete(
                    "c2",
                    "needs_user_input",
                    summary="I need the new name.",
                    missing_info=missing,
                    why_no_default=why,
                )
            ]
        ),
    )
    session_id, end = await editor.run("Rename greet")

    rejected = tool_result(fake.requests[1], "c1")
    assert "why_no_default" in rejected and "missing_info" in rejected
    check_strict_wire(fake.requests[1]["messages"])
    failed = [
        u
        for u in editor.updates[session_id]
        if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == "c1"
    ]
    assert [u["status"] for u in failed] == ["failed"]
    assert end == {
        "sessionUpdate": "session_end",
        "stopReason": "needs_user_input",
        "message": "I need the new name.",
        "steps": 2,
        "missingInfo": missing,
        "whyNoDefault": why,
    }
    [reports] = editor.client.progress_reports.values()
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "needs_user_input: the new name of greet"


async def test_complete_failed_ends_failed(editor: Harness, fake: FakeOpenAI) -> None:
    fake.script(Reply(tool_calls=[complete("c1", "failed", summary="a.py does not exist")]))
    _, end = await editor.run("Rename greet")
    assert end == {
        "sessionUpdate": "session_end",
        "stopReason": "failed",
        "message": "a.py does not exist",
        "steps": 1,
    }


BAD_WORKFLOW = """\
name = "bad"

[[movements]]
name = "only"
default_next = "nowhere"
"""

ABORTING_WORKFLOW = """\
name = "strict"
description = "Ending the turn without complete aborts."

[[movements]]
name = "solo"
instructions = "Call complete when done."
default_next = "ABORT"
"""


async def test_workflow_errors_name_file_and_field_and_the_server_lives(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    folder = workspace / ".cadenza" / "workflows"
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_text(BAD_WORKFLOW)
    (folder / "strict.toml").write_text(ABORTING_WORKFLOW)

    with pytest.raises(JsonRpcException) as caught:
        await editor.start("x", workflow="bad")
    assert caught.value.code == INVALID_PARAMS
    message = caught.value.message
    assert message.startswith(f"{workspace}/.cadenza/workflows/bad.toml: "), message  # no prefix
    assert ".cadenza/workflows/bad.toml: movements.0.default_next: 'nowhere'" in message

    with pytest.raises(JsonRpcException) as caught:
        await editor.start("x", workflow="nope")
    assert caught.value.code == INVALID_PARAMS
    assert "unknown workflow 'nope'" in caught.value.message
    assert "plan-implement-review" in caught.value.message

    with pytest.raises(JsonRpcException) as caught:
        await editor.execute("cadenza.startSession", {"task": "x", "workflow": ""})
    assert "workflow: String should have at least 1 character" in caught.value.message
    assert fake.requests == []

    # the broken file stops neither the server, nor the default, nor another workspace workflow
    fake.script(text("fine"), text("no complete call"))
    default_id, end = await editor.run("still alive?")
    assert end["stopReason"] == "end_turn"
    assert movements(editor, default_id)[0]["workflow"] == "default"
    strict_id, end = await editor.run("strict one", workflow="strict")
    assert end["stopReason"] == "aborted"
    assert end["message"] == "the model ended its turn"
    assert [(m["workflow"], m["movement"]) for m in movements(editor, strict_id)] == [
        ("strict", "solo")
    ]


@dataclass(frozen=True, kw_only=True)
class UsageReply(Reply):
    """A reply reporting ``total_tokens`` of usage (context pressure counts reported usage)."""

    total_tokens: int = 15

    def body(self, model: str) -> dict[str, Any]:
        body = super().body(model)
        total = self.total_tokens
        body["usage"] = {"prompt_tokens": total - 5, "completion_tokens": 5, "total_tokens": total}
        return body


def log_lines(editor: Harness, level: types.MessageType) -> list[str]:
    return [m.message for m in editor.client.log_messages if m.type == level]


async def test_cache_lookups_and_checkpoints_go_to_the_session_log(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    # Not just written: a file read within 2 s of its change (ctime too) is stamped with its
    # hash, and the second read, later than that on a loaded machine, would miss (safely).
    time.sleep(freshness.RACY_NS / 1e9 + 0.1)
    fake.script(
        call("read_file", {"path": "a.py"}, "c1"),
        call("write_file", {"path": "b.py", "content": "x = 1\n"}, "c2"),
        call("read_file", {"path": "a.py"}, "c3"),
        text("Read a.py twice."),
    )
    session_id, end = await editor.run("look")
    assert end["stopReason"] == "end_turn"
    lines = log_lines(editor, types.MessageType.Log)
    prefix = f"session {session_id}: "
    assert f"{prefix}tool cache miss: read_file (call c1)" in lines
    assert f"{prefix}tool cache hit: read_file (call c3)" in lines
    [checkpoint] = [line for line in lines if "checkpoint" in line]
    assert checkpoint.startswith(f"{prefix}checkpoint after movement work: ")
    # bookkeeping is not a session update (the done checks after the write are)
    assert {"movement", "tool_call", "tool_call_update", "agent_message_chunk", "check"} >= set(
        editor.kinds(session_id)[:-1]
    )


async def test_compaction_is_a_session_update(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    editor = await connect(init_options={"contextSize": 4096})
    for n in (1, 2, 3):
        (workspace / f"big{n}.py").write_text(f"# file {n}\n" + "x = 'abcdefghij' * 3\n" * 140)
    fake.script(
        call("read_file", {"path": "big1.py"}, "c1"),
        call("read_file", {"path": "big2.py"}, "c2"),
        UsageReply(
            tool_calls=call("read_file", {"path": "big3.py"}, "c3").tool_calls, total_tokens=1500
        ),
        text("Read three files."),
    )
    session_id, end = await editor.run("read the big files")
    assert end["stopReason"] == "end_turn", end
    [compaction] = [u for u in editor.updates[session_id] if u["sessionUpdate"] == "compaction"]
    assert set(compaction) == {
        "sessionUpdate",
        "tokensBefore",
        "tokensAfter",
        "messagesSummarized",
    }
    assert compaction["tokensBefore"] > compaction["tokensAfter"] > 0
    assert compaction["messagesSummarized"] == 4  # two read_file calls and their results
    last = fake.requests[-1]
    check_strict_wire(last["messages"])
    assert [m["tool_call_id"] for m in tool_messages(last)] == ["c3"]
    assert any("compacted" in line for line in log_lines(editor, types.MessageType.Log))
