"""Result recording: one tool message per call, in call order, for a batch."""

from __future__ import annotations

import pytest

from cadenza.engine.history import check_strict
from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from cadenza.tools.base import ToolResult
from cadenza.tools.dispatch.recording import BatchRecorder, record_batch

CALLS = [
    ToolCall(id="a", name="read_file", arguments='{"path": "x.py"}'),
    ToolCall(id="b", name="search", arguments='{"pattern": "y"}'),
    ToolCall(id="c", name="write_file", arguments='{"path": "z.py", "content": ""}'),
]


def test_order_follows_the_calls_not_the_results() -> None:
    results = {
        "c": ToolResult(content="wrote z.py"),
        "a": ToolResult(content="x.py text"),
        "b": ToolResult(content="no matches"),
    }
    messages = record_batch(CALLS, results)
    assert [m.tool_call_id for m in messages] == ["a", "b", "c"]
    assert [m.name for m in messages] == ["read_file", "search", "write_file"]
    assert [m.content for m in messages] == ["x.py text", "no matches", "wrote z.py"]
    assert all(isinstance(m, ToolMessage) and not m.is_error for m in messages)


def test_a_write_that_changed_nothing_is_carried_to_its_message() -> None:
    results = {
        "a": ToolResult(content="x.py text"),
        "b": ToolResult(content="no matches"),
        "c": ToolResult(content="z.py already has exactly this text", unchanged=True),
    }
    messages = record_batch(CALLS, results)
    assert [m.unchanged for m in messages] == [False, False, True]


def test_pairs_in_any_order_are_accepted_and_errors_carried() -> None:
    pairs = [
        ("b", ToolResult(content="bad regex", is_error=True)),
        ("a", ToolResult(content="ok")),
        ("c", ToolResult(content="ok")),
    ]
    messages = record_batch(CALLS, pairs)
    assert [(m.tool_call_id, m.is_error) for m in messages] == [
        ("a", False),
        ("b", True),
        ("c", False),
    ]
    assert messages[1].content == "bad regex"


def test_a_call_without_a_result_gets_a_not_run_error() -> None:
    messages = record_batch(
        CALLS,
        {"a": ToolResult(content="ok")},
        not_run_reason="the movement ended at an earlier call of this batch",
    )
    assert len(messages) == 3
    assert messages[0].content == "ok" and not messages[0].is_error
    for message, call in zip(messages[1:], CALLS[1:], strict=True):
        assert message.tool_call_id == call.id
        assert message.name == call.name
        assert message.is_error
        assert message.content == "not run: the movement ended at an earlier call of this batch"


def test_default_not_run_reason() -> None:
    (message,) = record_batch(CALLS[:1], {})
    assert message.is_error
    assert message.content.startswith("not run: ")


def test_result_for_an_unknown_id_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown tool call id 'zzz'"):
        record_batch(CALLS, {"zzz": ToolResult(content="?")})


def test_duplicate_results_are_rejected() -> None:
    pairs = [("a", ToolResult(content="one")), ("a", ToolResult(content="two"))]
    with pytest.raises(ValueError, match="second result for tool call id 'a'"):
        record_batch(CALLS, pairs)


def test_duplicate_call_ids_in_one_batch_are_rejected() -> None:
    calls = [CALLS[0], ToolCall(id="a", name="search", arguments="{}")]
    with pytest.raises(ValueError, match=r"duplicate tool call ids in one batch: \['a'\]"):
        BatchRecorder(calls)


def test_recorder_collects_as_results_arrive() -> None:
    recorder = BatchRecorder(CALLS)
    assert [c.id for c in recorder.pending] == ["a", "b", "c"]
    recorder.add("b", ToolResult(content="found"))
    assert [c.id for c in recorder.pending] == ["a", "c"]
    with pytest.raises(ValueError):
        recorder.add("b", ToolResult(content="again"))
    messages = recorder.messages(not_run_reason="cancelled")
    assert [(m.tool_call_id, m.content) for m in messages] == [
        ("a", "not run: cancelled"),
        ("b", "found"),
        ("c", "not run: cancelled"),
    ]


def test_empty_batch_records_nothing() -> None:
    assert record_batch([], {}) == []


def test_recorded_batch_satisfies_the_strict_server_rule() -> None:
    history: list[Message] = [
        SystemMessage(content="s"),
        UserMessage(content="task"),
        AssistantMessage(tool_calls=CALLS),
        *record_batch(CALLS, {"b": ToolResult(content="ok")}),
    ]
    check_strict(history)
