"""The five known failure modes of an earlier agent loop, each made impossible.

1. dangling control calls across movements (strict servers answer HTTP 400);
2. a context-overflow forced exit from a movement whose default is terminal looked like success;
3. the same through the buildup path (history grows step by step until the hard limit);
4. ``complete(needs_user_input)`` without ``missing_info``/``why_no_default`` was accepted;
5. a malformed ``waiting_human`` browse result became a waiting state with no session id
   (its test is ``tests/tools/test_browse_result.py::
   test_regression_waiting_human_without_session_id_is_an_error``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cadenza.engine.control import decide
from cadenza.engine.history import StrictHistoryError, check_strict
from cadenza.engine.results import Ended, NextMovement, overflow_exit
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.workflows import Movement, parse_workflow
from cadenza.messages import AssistantReply, ToolCall, ToolMessage
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

THREE = parse_workflow(
    """
name = "three"
[[movements]]
name = "plan"
default_next = "implement"
[[movements]]
name = "implement"
default_next = "review"
[[movements]]
name = "review"
default_next = "COMPLETE"
""",
    "test",
)


class StrictProvider(ScriptedProvider):
    """Refuses, as strict OpenAI-compatible servers do, any history with a dangling call."""

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        try:
            check_strict(request.messages)
        except StrictHistoryError as exc:
            raise ProviderError(f"HTTP 400: {exc}") from None
        return await super().complete(request, on_text)


def test_strict_check_really_rejects_a_dangling_call() -> None:
    """The double is only worth something if it fails on the bug."""
    from cadenza.messages import AssistantMessage, SystemMessage, UserMessage

    dangling = [
        SystemMessage(content="s"),
        UserMessage(content="t"),
        AssistantMessage(tool_calls=[ToolCall(id="c", name="transition", arguments="{}")]),
        UserMessage(content="next movement"),
    ]
    with pytest.raises(StrictHistoryError):
        check_strict(dangling)


async def test_regression_no_dangling_control_calls_across_movements(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = StrictProvider(
        [
            # plan: a transition, with another call after it in the same reply (not run, answered)
            reply(call("read_file", "r1", path="a.py")),
            reply(
                call("transition", "t1", next="implement", reason="plan: set x to 2"),
                call("read_file", "r2", path="a.py"),
            ),
            # implement: an edit, then a transition
            reply(call("edit_file", "e1", path="a.py", old_string="1", new_string="2")),
            reply(call("transition", "t2", next="review", reason="edited")),
            # review: a rejected complete, then a real one
            reply(call("complete", "c1", status="needs_user_input", summary="?")),
            reply(call("complete", "c2", status="done", summary="x is 2")),
        ]
    )
    editor = MemoryEditor()
    session = Session(
        session_id="s",
        task="set x to 2",
        root=tmp_path,
        provider=provider,
        editor=editor,
        workflow=THREE,
    )
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn", outcome
    assert outcome.message == "x is 2"
    assert (tmp_path / "a.py").read_text() == "x = 2\n"
    assert len(provider.requests) == 6
    for request in provider.requests:
        check_strict(request.messages)  # every request, the first of each movement included
    check_strict(session.messages)
    movements = [e.movement for e in editor.events if e.kind == "movement"]
    assert movements == ["plan", "implement", "review"]
    # the call after the control call got its own tool message saying it did not run
    r2 = next(m for m in session.messages if isinstance(m, ToolMessage) and m.tool_call_id == "r2")
    assert r2.is_error and r2.content.startswith("not run")


def test_regression_overflow_forced_exit_never_looks_like_success() -> None:
    complete = Movement(name="work", default_next="COMPLETE")
    ask = Movement(name="work", default_next="ASK")
    abort = Movement(name="work", default_next="ABORT")
    onward = Movement(name="plan", default_next="implement")
    for movement in (complete, ask, abort):
        forced = overflow_exit(movement, "too big")
        assert isinstance(forced, Ended) and forced.outcome.stop_reason == "aborted"
    moved = overflow_exit(onward, "too big")
    assert isinstance(moved, NextMovement) and moved.movement == "implement"
    assert "context overflow" in moved.reason


async def test_regression_overflow_buildup_path_aborts(tmp_path: Path) -> None:
    """History grows step by step until compaction cannot help: abort, never success.

    Single reads are compacted away as the history grows (a ``compaction`` event); then a batch
    of reads too big to summarize (the latest turn is always kept whole) crosses the hard limit.
    """
    for i in range(8):
        (tmp_path / f"f{i}.txt").write_text(
            "".join(f"{i}.{j} " + "y" * 50 + "\n" for j in range(60))
        )
    steps = [reply(call("read_file", f"r{i}", path=f"f{i}.txt")) for i in range(4)]
    batch = reply(
        *(call("read_file", f"b{i}", path=f"f{i}.txt", limit=100 + i) for i in range(4, 8))
    )
    provider = ScriptedProvider([*steps, batch, reply(content="all read, done")])
    editor = MemoryEditor()
    session = Session(
        session_id="s",
        task="read every file",
        root=tmp_path,
        provider=provider,
        editor=editor,
        settings=SessionSettings(context_size=4096, max_steps=30),
    )
    outcome = await session.run()
    assert outcome.stop_reason == "aborted", outcome
    assert "context overflow" in outcome.message
    kinds = [e.kind for e in editor.events]
    assert "compaction" in kinds  # it compacted first, then had to exit
    check_strict(session.messages)


@pytest.mark.parametrize(
    "arguments",
    [
        {"status": "needs_user_input", "summary": "s"},
        {"status": "needs_user_input", "summary": "s", "missing_info": "which db?"},
        {"status": "needs_user_input", "summary": "s", "why_no_default": "no sane default"},
        {"status": "needs_user_input", "summary": "s", "missing_info": " ", "why_no_default": "x"},
    ],
)
def test_regression_needs_user_input_requires_both_reasons(arguments: dict[str, str]) -> None:
    decision = decide(ToolCall(id="c", name="complete", arguments=json.dumps(arguments)), THREE)
    assert decision.is_error and decision.result is None
    assert "missing_info" in decision.content and "why_no_default" in decision.content


async def test_needs_user_input_with_both_reasons_ends_the_session_so(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            reply(call("complete", "c0", status="needs_user_input", summary="need a name")),
            reply(
                call(
                    "complete",
                    "c1",
                    status="needs_user_input",
                    summary="need a name",
                    missing_info="the new function name",
                    why_no_default="any name is a guess",
                )
            ),
        ]
    )
    editor = MemoryEditor()
    session = Session(
        session_id="s", task="rename it", root=tmp_path, provider=provider, editor=editor
    )
    outcome = await session.run()
    assert outcome.stop_reason == "needs_user_input"
    assert (outcome.missing_info, outcome.why_no_default) == (
        "the new function name",
        "any name is a guess",
    )
    first = next(m for m in session.messages if isinstance(m, ToolMessage))
    assert first.is_error and "why_no_default" in first.content
    end = editor.events[-1]
    assert end.kind == "session_end" and end.missing_info == "the new function name"
