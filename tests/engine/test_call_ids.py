"""Tool-call ids unique in a session although the provider reuses them."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.call_ids import CallIds
from cadenza.engine.events import (
    PermissionDecided,
    SessionEvent,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
)
from cadenza.engine.journal import TranscriptRecorder
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.transcript import EventRecord, MessageRecord, read_transcript
from cadenza.host.restore import restore_state
from cadenza.messages import (
    AssistantMessage,
    AssistantReply,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply


def ids(reply: AssistantReply) -> list[str]:
    return [c.id for c in reply.tool_calls]


def test_new_ids_are_kept_and_the_reply_is_not_copied() -> None:
    calls = CallIds()
    first = reply(call("list_files", "call_0"), call("read_file", "call_1", path="a"))
    assert calls.fresh(first) is first
    assert "call_0" in calls and "call_1" in calls


def test_reused_and_empty_ids_get_fresh_ones() -> None:
    calls = CallIds()
    calls.fresh(reply(call("list_files", "call_0")))
    again = calls.fresh(reply(call("list_files", "call_0")))
    assert ids(again) == ["call_0-2"]
    third = calls.fresh(reply(call("list_files", "call_0")))
    assert ids(third) == ["call_0-3"]
    empty = ToolCall(id="", name="list_files", arguments="{}")
    blank = ToolCall(id="  ", name="list_files", arguments="{}")
    assert ids(calls.fresh(reply(empty, blank))) == ["call-1", "call-2"]
    # Two calls of one reply with one id: the second is renamed too.
    twins = calls.fresh(reply(call("list_files", "x"), call("search", "x", query="q")))
    assert ids(twins) == ["x", "x-2"]
    # The rest of the reply is kept.
    assert [c.name for c in twins.tool_calls] == ["list_files", "search"]


def test_a_fresh_id_never_collides_with_one_used_later() -> None:
    calls = CallIds()
    calls.fresh(reply(call("list_files", "a"), call("list_files", "a-2")))
    assert ids(calls.fresh(reply(call("list_files", "a")))) == ["a-3"]


def test_ids_of_a_restored_history_count_as_used() -> None:
    history: list[Message] = [
        AssistantMessage(tool_calls=[ToolCall(id="call_0", name="list_files", arguments="{}")]),
        ToolMessage(tool_call_id="call_0", name="list_files", content=""),
    ]
    calls = CallIds(history)
    assert ids(calls.fresh(reply(call("list_files", "call_0")))) == ["call_0-2"]


def call_ids_of(events: list[SessionEvent]) -> list[tuple[str, str]]:
    """``(kind, tool_call_id)`` of every event about a call."""
    kinds = (ToolCallStarted, ToolCallFinished, ToolCacheLookup, PermissionDecided)
    return [(e.kind, e.tool_call_id) for e in events if isinstance(e, kinds)]


def assistant_ids(messages: list[Message]) -> list[str]:
    return [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]


def tool_result_ids(messages: list[Message]) -> list[str]:
    return [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]


async def test_a_session_gives_reused_ids_fresh_ones_everywhere(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    empty = ToolCall(id="", name="list_files", arguments="{}")
    provider = ScriptedProvider(
        [
            reply(call("read_file", "call_0", path="a.txt")),
            reply(call("run_command", "call_0", command="true")),
            reply(empty),
            reply(call("list_files", "call_0", path=".")),
            reply(content="done"),
        ]
    )
    editor = MemoryEditor()
    recorder = TranscriptRecorder.start(
        session_id="s1",
        task="do it",
        root=tmp_path,
        workflow="default",
        model="scripted/test",
        directory=tmp_path / "t",
    )
    session = Session(
        session_id="s1",
        task="do it",
        root=tmp_path,
        provider=provider,
        editor=editor,
        settings=SessionSettings(),
        recorder=recorder,
    )  # type: ignore[arg-type]
    outcome = await session.run()
    recorder.close()
    assert outcome.stop_reason == "end_turn"

    expected = ["call_0", "call_0-2", "call-1", "call_0-3"]
    assert assistant_ids(session.messages) == expected
    assert tool_result_ids(session.messages) == expected
    # The model is sent the same ids: each result answers its own call.
    last_request = provider.requests[-1].messages
    assert assistant_ids(last_request) == expected == tool_result_ids(last_request)
    # Events: each call's start, end (and cache lookup, permission) carry its own id.
    started = [i for kind, i in call_ids_of(editor.events) if kind == "tool_call"]
    finished = [i for kind, i in call_ids_of(editor.events) if kind == "tool_call_update"]
    assert started == expected == finished
    assert ("permission", "call_0-2") in call_ids_of(editor.events)
    assert [r.tool_call_id for r in editor.asked] == ["call_0-2"]

    # The transcript holds what the session held, and a restored session goes on from there.
    records = read_transcript(tmp_path / "t" / "s1.jsonl")
    recorded = [r.message for r in records if isinstance(r, MessageRecord)]
    assert assistant_ids(recorded) == expected == tool_result_ids(recorded)
    events = [r.event for r in records if isinstance(r, EventRecord)]
    assert call_ids_of(events) == call_ids_of(editor.events)

    state = restore_state(records)
    more = ScriptedProvider([reply(call("list_files", "call_0")), reply(content="again")])
    restored = Session(
        session_id="s1",
        task="do it",
        root=tmp_path,
        provider=more,
        editor=MemoryEditor(),
        history=state.history,
        last=state.last,
    )  # type: ignore[arg-type]
    await restored.resume("once more")
    assert assistant_ids(restored.messages) == [*expected, "call_0-4"]
    assert tool_result_ids(restored.messages) == [*expected, "call_0-4"]


def test_a_restored_session_never_takes_an_id_only_its_events_name(tmp_path: Path) -> None:
    """The engine's own calls (a done check's test run) are in the events, not the history."""
    recorder = TranscriptRecorder.start(
        session_id="s2",
        task="fix it",
        root=tmp_path,
        workflow="default",
        model="scripted/test",
        directory=tmp_path / "t",
    )
    recorder.on_message(UserMessage(tag="task", content="fix it"))
    recorder.on_event(
        ToolCallStarted(
            tool_call_id="check-tests",
            name="run_command",
            title="Checking the tests: running `pytest`",
            tool_kind="execute",
            raw_input="{}",
        )
    )
    recorder.close()
    state = restore_state(read_transcript(tmp_path / "t" / "s2.jsonl"))
    assert state.call_ids == {"check-tests"}
    restored = Session(
        session_id="s2",
        task="fix it",
        root=tmp_path,
        provider=ScriptedProvider([]),
        editor=MemoryEditor(),
        history=state.history,
        last=state.last,
    )  # type: ignore[arg-type]
    restored.restore_call_ids(state.call_ids)
    again = ToolCall(id="check-tests", name="run_command", arguments="{}")
    assert restored.rt.call_ids.claim(again).id == "check-tests-2"
