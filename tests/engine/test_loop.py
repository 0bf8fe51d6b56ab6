"""Loop rules: tool calls continue the turn, none ends it, the step bound, the stuck detector."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from cadenza.engine.events import SessionFinished, ToolCallFinished
from cadenza.engine.loop import FinishTurn, RunTools, resolve_step
from cadenza.engine.session import CUT_ARGUMENTS, Session, SessionSettings
from cadenza.messages import AssistantMessage, AssistantReply, ToolCall, ToolMessage, UserMessage
from cadenza.providers.base import ProviderError
from tests.doubles import LoopingProvider, MemoryEditor, ScriptedProvider, call, reply


def make_session(
    tmp_path: Path,
    provider: ScriptedProvider,
    editor: MemoryEditor | None = None,
    **settings: object,
) -> tuple[Session, MemoryEditor]:
    editor = editor or MemoryEditor()
    session = Session(
        session_id="s1",
        task="do it",
        root=tmp_path,
        provider=provider,
        editor=editor,
        settings=SessionSettings(**settings),
    )  # type: ignore[arg-type]
    return session, editor


def tool_messages(session: Session) -> list[ToolMessage]:
    return [m for m in session.messages if isinstance(m, ToolMessage)]


def test_resolve_step_is_structural() -> None:
    # Prose that announces an action does not continue the turn; only tool_calls do.
    assert isinstance(resolve_step(AssistantReply(content="I will now edit app.py")), FinishTurn)
    step = resolve_step(AssistantReply(tool_calls=[ToolCall(id="1", name="x", arguments="{}")]))
    assert isinstance(step, RunTools) and not step.cut
    cut = resolve_step(
        AssistantReply(
            tool_calls=[ToolCall(id="1", name="x", arguments="{")], finish_reason="length"
        )
    )
    assert isinstance(cut, RunTools) and cut.cut


async def test_tool_calls_continue_and_empty_list_ends(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    provider = ScriptedProvider(
        [
            reply(call("read_file", path="a.txt")),
            reply(content="It says hello."),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert outcome.message == "It says hello."
    assert outcome.steps == 2
    assert len(provider.requests) == 2
    # The second request carries the first call's result, right after the call.
    second = provider.requests[1].messages
    assert isinstance(second[-2], AssistantMessage)
    assert isinstance(second[-1], ToolMessage) and "hello" in second[-1].content
    assert editor.kinds()[-1] == "session_end"


async def test_first_step_requires_a_call_later_steps_do_not(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply(call("list_files")), reply(content="done")])
    session, _ = make_session(tmp_path, provider)
    await session.run()
    assert [r.tool_choice for r in provider.requests] == ["required", "auto"]


async def test_step_bound_ends_runaway_session(tmp_path: Path) -> None:
    provider = LoopingProvider(reply(call("list_files")))
    session, editor = make_session(tmp_path, provider, max_steps=3)
    outcome = await session.run()
    assert outcome.stop_reason == "max_steps"
    assert len(provider.requests) == 3
    end = editor.events[-1]
    assert isinstance(end, SessionFinished) and end.stop_reason == "max_steps"


async def test_repeated_identical_call_gets_an_observation_not_an_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    same = call("read_file", path="a.txt")
    provider = ScriptedProvider(
        [
            reply(same),
            reply(ToolCall(id="c2", name="read_file", arguments='{"path":"a.txt"}')),
            reply(content="ok"),
        ]
    )
    session, _ = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"  # the turn went on after the repeat
    results = tool_messages(session)
    assert len(results) == 2
    assert "already called read_file" in results[1].content
    assert results[1].is_error


async def test_repeat_after_an_edit_runs_again(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x = 1\n")
    read = call("read_file", path="a.txt")
    provider = ScriptedProvider(
        [
            reply(read),
            reply(call("edit_file", path="a.txt", old_string="1", new_string="2")),
            reply(ToolCall(id="again", name="read_file", arguments=read.arguments)),
            reply(content="done"),
        ]
    )
    session, _ = make_session(tmp_path, provider)
    await session.run()
    assert "x = 2" in tool_messages(session)[2].content


async def test_unknown_tool_and_bad_arguments_are_error_results(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            reply(ToolCall(id="u", name="teleport", arguments="{}")),
            reply(ToolCall(id="j", name="read_file", arguments="{not json")),
            reply(ToolCall(id="t", name="read_file", arguments='{"path": 5}')),
            reply(ToolCall(id="x", name="read_file", arguments='{"path": "a", "bogus": 1}')),
            reply(content="gave up"),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    results = tool_messages(session)
    assert all(r.is_error for r in results)
    assert "unknown tool 'teleport'" in results[0].content and "read_file" in results[0].content
    assert "not valid JSON" in results[1].content
    assert "path" in results[2].content
    assert "bogus" in results[3].content
    failed = [e for e in editor.events if isinstance(e, ToolCallFinished)]
    assert [e.status for e in failed] == ["failed"] * 4


async def test_batch_gets_one_tool_message_per_call_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    provider = ScriptedProvider(
        [
            reply(
                call("read_file", "c1", path="a.txt"),
                call("read_file", "c2", path="b.txt"),
                call("nope", "c3"),
            ),
            reply(content="done"),
        ]
    )
    session, _ = make_session(tmp_path, provider)
    await session.run()
    assert [m.tool_call_id for m in tool_messages(session)] == ["c1", "c2", "c3"]


async def test_cut_arguments_write_nothing(tmp_path: Path) -> None:
    """Arguments cut by finish_reason=length are never run or repaired."""
    cut = ToolCall(
        id="w", name="write_file", arguments='{"path":"a.py","content":"def f():\\n    ret'
    )
    provider = ScriptedProvider([reply(cut, finish="length"), reply(content="ok")])
    session, editor = make_session(tmp_path, provider)
    await session.run()
    assert not (tmp_path / "a.py").exists()
    assert editor.edits == []
    assert tool_messages(session)[0].content == CUT_ARGUMENTS


async def test_provider_error_ends_with_error(tmp_path: Path) -> None:
    provider = ScriptedProvider([ProviderError("HTTP 500 after 4 attempts")])
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "error"
    assert "HTTP 500" in outcome.message
    end = editor.events[-1]
    assert isinstance(end, SessionFinished) and end.stop_reason == "error"


async def test_cancel_ends_with_cancelled_and_closes_dangling_calls(tmp_path: Path) -> None:
    """On cancel, every tool call keeps a tool message."""
    editor = MemoryEditor()
    started = anyio.Event()

    async def never_answer(question: str) -> str | None:
        started.set()
        await anyio.sleep_forever()
        return None

    editor.ask_user = never_answer  # type: ignore[method-assign]
    provider = ScriptedProvider([reply(call("ask_user", "q1", question="which?"))])
    session, _ = make_session(tmp_path, provider, editor)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        await started.wait()
        tg.cancel_scope.cancel()
    end = editor.events[-1]
    assert isinstance(end, SessionFinished) and end.stop_reason == "cancelled"
    answered = {m.tool_call_id for m in tool_messages(session)}
    assert answered == {"q1"}


async def test_internal_error_in_tool_is_a_result_not_a_crash(tmp_path: Path) -> None:
    editor = MemoryEditor()

    async def boom(question: str) -> str | None:
        raise RuntimeError("kaboom")

    editor.ask_user = boom  # type: ignore[method-assign]
    provider = ScriptedProvider([reply(call("ask_user", question="?")), reply(content="fine")])
    session, _ = make_session(tmp_path, provider, editor)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert "kaboom" in tool_messages(session)[0].content


async def test_system_prompt_states_the_contract(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("")
    session, _ = make_session(tmp_path, ScriptedProvider([]))
    system = session.messages[0].content
    assert "empty tool_calls list ends your turn" in system
    assert "Never describe or announce an action" in system
    assert "m.py" not in system and str(tmp_path) not in system  # the same for every workspace
    workspace = session.messages[1]
    assert isinstance(workspace, UserMessage) and workspace.tag == "workspace"
    assert str(tmp_path) in workspace.content and "m.py" in workspace.content  # the overview
    assert isinstance(session.messages[2], UserMessage) and session.messages[2].tag == "task"


@pytest.mark.parametrize("answer", ["blue", None])
async def test_ask_user_answer_becomes_tool_result(tmp_path: Path, answer: str | None) -> None:
    editor = MemoryEditor(answers=[answer])
    provider = ScriptedProvider([reply(call("ask_user", question="colour?")), reply(content="ok")])
    session, _ = make_session(tmp_path, provider, editor)
    await session.run()
    assert editor.questions == ["colour?"]
    result = tool_messages(session)[0].content
    assert ("blue" in result) if answer else ("declined" in result)
