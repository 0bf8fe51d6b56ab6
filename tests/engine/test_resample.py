"""Futile replies are asked for again once (``engine.resample``, issue 17)."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.events import ContractRepaired
from cadenza.engine.resample import RESAMPLE_TEMPERATURE
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import LOCAL_LOOP, LoopSettings
from cadenza.messages import AssistantMessage, ToolMessage, UserMessage
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

LOOP = LOCAL_LOOP.replace(prime=False, checks="rename", resample=True)
WRONG = call("edit_file", path="a.py", old_string="def f():\n    pass", new_string="X = 2")
RIGHT = call("edit_file", path="a.py", old_string="x = 1", new_string="x = 2")
SAME = call("edit_file", path="a.py", old_string="x = 1", new_string="x = 1")
DONE = call("complete", status="done", summary="ok")


def make_session(
    root: Path, provider: ScriptedProvider, loop: LoopSettings = LOOP
) -> tuple[Session, MemoryEditor]:
    (root / "a.py").write_text("x = 1\n")
    editor = MemoryEditor()
    settings = SessionSettings(loop=loop, max_steps=10)
    session = Session(
        session_id="s1",
        task="set x to 2 in a.py",
        root=root,
        provider=provider,
        editor=editor,
        settings=settings,
    )  # type: ignore[arg-type]
    return session, editor


def repairs(editor: MemoryEditor) -> list[tuple[str, bool]]:
    return [(e.reason, e.recovered) for e in editor.events if isinstance(e, ContractRepaired)]


def sent(session: Session) -> list[str]:
    """The arguments of every call in the history (futile replies never enter it)."""
    return [
        c.arguments
        for m in session.messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls or []
    ]


async def test_a_failed_call_sent_again_is_asked_for_again(tmp_path: Path) -> None:
    read = call("read_file", path="a.py")
    provider = ScriptedProvider(
        [reply(WRONG), reply(read), reply(WRONG), reply(RIGHT), reply(DONE)]
    )
    session, editor = make_session(tmp_path, provider)
    assert (await session.run()).stop_reason == "end_turn"
    assert (tmp_path / "a.py").read_text() == "x = 2\n"
    assert repairs(editor) == [("repeat", True)]
    retry = provider.requests[3]
    assert retry.temperature == RESAMPLE_TEMPERATURE and retry.frequency_penalty is None
    note = retry.messages[-1]
    assert isinstance(note, UserMessage) and note.tag == "repair"
    assert "failed at step 1 (old_string was not found in a.py" in note.content
    assert sent(session).count(WRONG.arguments) == 1  # the first call; its repeat was dropped
    assert len(provider.requests) == 5 and provider.requests[4].temperature is None
    # The repeat never reached the history, nor the note: the next request is the plain one.
    assert not any(isinstance(m, UserMessage) and m.tag == "repair" for m in session.messages)


async def test_an_edit_that_changes_nothing_is_asked_for_again(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply(SAME), reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    assert (await session.run()).stop_reason == "end_turn"
    assert repairs(editor) == [("no_change", True)]
    assert "new_string equal to old_string" in provider.requests[1].messages[-1].content
    assert next(m for m in session.messages if isinstance(m, ToolMessage)).content.startswith(
        "edited a.py"
    )


async def test_a_second_futile_reply_goes_on_as_it_is(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply(SAME), reply(SAME), reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    assert (await session.run()).stop_reason == "end_turn"
    assert repairs(editor) == [("no_change", False)]
    first = next(m for m in session.messages if isinstance(m, ToolMessage))
    assert "old_string and new_string are the same" in first.content


async def test_a_failed_call_may_succeed_after_a_command(tmp_path: Path) -> None:
    """A command may have made the failed call right: it is run again, not resampled."""
    read = call("read_file", path="b.py")
    make = call("run_command", command="echo y = 1 > b.py")
    provider = ScriptedProvider([reply(read), reply(make), reply(read), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    assert (await session.run()).stop_reason == "end_turn"
    assert repairs(editor) == []
    results = [m.content for m in session.messages if isinstance(m, ToolMessage)]
    assert "y = 1" in results[2] and "y = 1" not in results[0]


async def test_off_by_setting(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply(SAME), reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider, LOOP.replace(resample=False))
    assert (await session.run()).stop_reason == "end_turn"
    assert repairs(editor) == [] and len(provider.requests) == 3
