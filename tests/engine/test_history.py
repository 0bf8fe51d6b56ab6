"""The replay sanitizer and the strict-server check it satisfies."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadenza.engine.history import (
    INTERRUPTED_RESULT,
    MISSING_RESULTS,
    ORPHAN_RESULT,
    StrictHistoryError,
    check_strict,
    check_strict_wire,
    sanitize_history,
)
from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

SYSTEM = SystemMessage(content="you are cadenza")
TASK = UserMessage(content="fix the bug")


def call(call_id: str, name: str = "read_file") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments="{}")


def asks(*ids: str) -> AssistantMessage:
    return AssistantMessage(content="", tool_calls=[call(i) for i in ids])


def result(call_id: str, content: str = "ok", name: str = "read_file") -> ToolMessage:
    return ToolMessage(tool_call_id=call_id, name=name, content=content)


def shape(messages: list[Message]) -> list[str]:
    """Compact view: roles, with call ids and tool-call ids."""
    out = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            out.append("assistant(" + ",".join(c.id for c in m.tool_calls) + ")")
        elif isinstance(m, ToolMessage):
            out.append(f"tool({m.tool_call_id}{'!' if m.is_error else ''})")
        else:
            out.append(m.role)
    return out


# sanitize_history: concrete cases


def test_a_valid_history_is_returned_unchanged() -> None:
    history: list[Message] = [
        SYSTEM,
        TASK,
        asks("a", "b"),
        result("a"),
        result("b"),
        AssistantMessage(content="done"),
    ]
    assert sanitize_history(history) == history
    check_strict(history)


def test_unmatched_call_gets_a_synthetic_error_result() -> None:
    history: list[Message] = [SYSTEM, TASK, AssistantMessage(tool_calls=[call("a", "transition")])]
    fixed = sanitize_history(history)
    assert shape(fixed) == ["system", "user", "assistant(a)", "tool(a!)"]
    synthetic = fixed[-1]
    assert isinstance(synthetic, ToolMessage)
    assert synthetic.name == "transition"
    assert synthetic.content == INTERRUPTED_RESULT
    assert synthetic.content == "no result was recorded for this call (the session was interrupted)"


def test_one_result_of_a_batch_missing_is_filled_in_call_order() -> None:
    fixed = sanitize_history([SYSTEM, TASK, asks("a", "b", "c"), result("b")])
    assert shape(fixed) == ["system", "user", "assistant(a,b,c)", "tool(a!)", "tool(b)", "tool(c!)"]


def test_tool_message_answering_no_call_is_dropped() -> None:
    fixed = sanitize_history([SYSTEM, TASK, result("ghost"), asks("a"), result("a"), result("x")])
    assert shape(fixed) == ["system", "user", "assistant(a)", "tool(a)"]


def test_tool_message_before_its_call_is_dropped() -> None:
    fixed = sanitize_history([SYSTEM, TASK, result("a", "early"), asks("a")])
    assert shape(fixed) == ["system", "user", "assistant(a)", "tool(a!)"]


def test_duplicate_results_keep_the_first() -> None:
    history: list[Message] = [
        SYSTEM,
        TASK,
        asks("a"),
        result("a", "first"),
        result("a", "second"),
        UserMessage(content="more"),
        result("a", "third"),
    ]
    fixed = sanitize_history(history)
    assert shape(fixed) == ["system", "user", "assistant(a)", "tool(a)", "user"]
    assert isinstance(fixed[3], ToolMessage) and fixed[3].content == "first"


def test_late_result_is_moved_back_after_its_call() -> None:
    history: list[Message] = [
        SYSTEM,
        TASK,
        asks("a"),
        UserMessage(content="hurry up"),
        asks("b"),
        result("b"),
        result("a", "late"),
    ]
    fixed = sanitize_history(history)
    assert shape(fixed) == [
        "system",
        "user",
        "assistant(a)",
        "tool(a)",
        "user",
        "assistant(b)",
        "tool(b)",
    ]
    assert isinstance(fixed[3], ToolMessage) and fixed[3].content == "late"


def test_results_are_put_in_call_order() -> None:
    fixed = sanitize_history([SYSTEM, TASK, asks("a", "b"), result("b"), result("a")])
    assert shape(fixed) == ["system", "user", "assistant(a,b)", "tool(a)", "tool(b)"]


def test_ids_repeated_across_replies_are_matched_in_order() -> None:
    """Some servers number calls call_0 in every reply; each reply's call keeps its own result."""
    history: list[Message] = [
        SYSTEM,
        TASK,
        asks("call_0"),
        result("call_0", "one"),
        asks("call_0"),
        result("call_0", "two"),
        asks("call_0"),
    ]
    fixed = sanitize_history(history)
    contents = [m.content for m in fixed if isinstance(m, ToolMessage)]
    assert contents == ["one", "two", INTERRUPTED_RESULT]
    check_strict(fixed)


def test_system_message_stays_first() -> None:
    fixed = sanitize_history([SYSTEM, result("a"), TASK, asks("a")])
    assert fixed[0] is SYSTEM
    assert shape(fixed) == ["system", "user", "assistant(a)", "tool(a!)"]


def test_input_is_not_changed() -> None:
    history: list[Message] = [SYSTEM, TASK, asks("a", "b"), result("b"), result("zzz")]
    before = [m.model_copy(deep=True) for m in history]
    sanitize_history(history)
    assert history == before


def test_empty_history() -> None:
    assert sanitize_history([]) == []
    check_strict([])


# check_strict: the strict server's HTTP 400


def test_check_strict_rejects_an_unanswered_call_with_the_server_text() -> None:
    with pytest.raises(StrictHistoryError) as info:
        check_strict([SYSTEM, TASK, asks("a", "b"), result("a"), UserMessage(content="next")])
    error = info.value
    assert error.status_code == 400
    assert error.index == 2
    assert str(error) == MISSING_RESULTS.format(ids="b")
    assert str(error).startswith(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'."
    )
    assert error.response_body() == {
        "error": {
            "message": str(error),
            "type": "invalid_request_error",
            "param": "messages.[2].role",
            "code": None,
        }
    }


def test_check_strict_rejects_a_call_at_the_end() -> None:
    with pytest.raises(StrictHistoryError, match="did not have response messages: a, b"):
        check_strict([SYSTEM, TASK, asks("a", "b")])


def test_check_strict_rejects_a_tool_message_without_its_call() -> None:
    with pytest.raises(StrictHistoryError) as info:
        check_strict([SYSTEM, TASK, result("a")])
    assert str(info.value) == ORPHAN_RESULT
    assert info.value.index == 2
    assert "must be a response to a preceding message with 'tool_calls'" in ORPHAN_RESULT


def test_check_strict_rejects_a_result_after_a_later_user_message() -> None:
    with pytest.raises(StrictHistoryError, match="did not have response messages: a"):
        check_strict([SYSTEM, TASK, asks("a"), UserMessage(content="?"), result("a")])


def test_check_strict_rejects_a_result_for_another_reply_s_call() -> None:
    history: list[Message] = [SYSTEM, TASK, asks("a"), result("a"), asks("b"), result("a")]
    with pytest.raises(StrictHistoryError) as info:
        check_strict(history)
    assert str(info.value) == ORPHAN_RESULT and info.value.index == 5


def test_check_strict_rejects_a_second_answer() -> None:
    with pytest.raises(StrictHistoryError) as info:
        check_strict([SYSTEM, TASK, asks("a"), result("a"), result("a")])
    assert info.value.index == 4


def test_check_strict_wire_reads_the_chat_completions_shape() -> None:
    good: list[dict[str, Any]] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "t"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]
    check_strict_wire(good)
    with pytest.raises(StrictHistoryError, match="did not have response messages: a"):
        check_strict_wire(good[:3])
    with pytest.raises(StrictHistoryError, match="must be a response"):
        check_strict_wire([*good[:2], good[3]])


# properties: any prefix of any history


IDS = st.sampled_from(["c0", "c1", "c2", "call_0"])
NAMES = st.sampled_from(["read_file", "transition", "complete"])


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Random conversations, including every way a transcript goes wrong."""
    message = st.one_of(
        st.builds(UserMessage, content=st.sampled_from(["task", "answer"])),
        st.builds(
            AssistantMessage,
            content=st.sampled_from(["", "thinking"]),
            tool_calls=st.lists(
                st.builds(ToolCall, id=IDS, name=NAMES, arguments=st.just("{}")), max_size=3
            ),
        ),
        st.builds(
            ToolMessage,
            tool_call_id=IDS,
            name=NAMES,
            content=st.sampled_from(["ok", "err"]),
            is_error=st.booleans(),
        ),
        st.builds(SystemMessage, content=st.just("late system note")),
    )
    body = draw(st.lists(message, max_size=14))
    return [SYSTEM, *body] if draw(st.booleans()) else body


@settings(max_examples=300, deadline=None, database=None)
@given(histories())
def test_every_prefix_sanitizes_to_a_strict_idempotent_history(history: list[Message]) -> None:
    for end in range(len(history) + 1):
        prefix = history[:end]
        fixed = sanitize_history(prefix)
        check_strict(fixed)
        assert sanitize_history(fixed) == fixed
        # Only tool messages move or vanish; everything else keeps its order.
        assert [m for m in fixed if not isinstance(m, ToolMessage)] == [
            m for m in prefix if not isinstance(m, ToolMessage)
        ]
        # Exactly one result per call.
        calls = sum(len(m.tool_calls) for m in prefix if isinstance(m, AssistantMessage))
        assert sum(isinstance(m, ToolMessage) for m in fixed) == calls
        if prefix and isinstance(prefix[0], SystemMessage):
            assert fixed[0] is prefix[0]


@settings(max_examples=200, deadline=None, database=None)
@given(histories())
def test_sanitize_keeps_a_history_the_strict_check_accepts_up_to_result_order(
    history: list[Message],
) -> None:
    try:
        check_strict(history)
    except StrictHistoryError:
        return
    fixed = sanitize_history(history)
    assert len(fixed) == len(history)
    assert sorted(map(repr, fixed)) == sorted(map(repr, history))
