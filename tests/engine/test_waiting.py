"""Waiting states and the permission gate in the engine, with test doubles (unit tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cadenza.engine.events import PermissionDecided, SessionFinished, SessionResumed
from cadenza.engine.journal import TranscriptRecorder
from cadenza.engine.permissions import PermissionAnswer, PermissionGate, PermissionStore
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.transcript import read_transcript
from cadenza.engine.workflows import load_catalog
from cadenza.host.restore import restore_state
from cadenza.messages import ToolMessage, UserMessage
from cadenza.tools.base import HumanWait, Tool, ToolArgs, ToolContext, ToolResult
from cadenza.tools.registry import ToolRegistry, default_tools
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

ASK = {
    "status": "needs_user_input",
    "summary": "",
    "missing_info": "the new name",
    "why_no_default": "two names fit",
}


class WaitArgs(ToolArgs):
    pass


class FakeBrowser(Tool[WaitArgs]):
    """Stands in for browse_interactive: the first call waits for a person, later calls read."""

    name = "browse_interactive"
    description = "fake"
    args_model = WaitArgs

    def __init__(self) -> None:
        self.calls = 0

    async def invoke(self, args: WaitArgs, ctx: ToolContext) -> ToolResult:
        self.calls += 1
        if self.calls == 1:
            wait = HumanWait(wait_reason="log in", browser_session_id="br-1", url="http://x/")
            return ToolResult(content="waiting", waiting_human=wait)
        return ToolResult(content="Welcome")


def session_for(
    tmp_path: Path,
    provider: ScriptedProvider,
    editor: MemoryEditor,
    **kwargs: Any,
) -> Session:
    return Session(
        session_id="s1",
        task="do it",
        root=tmp_path,
        provider=provider,
        editor=editor,
        **kwargs,
    )


async def test_needs_user_input_then_resume_in_the_same_movement(tmp_path: Path) -> None:
    catalog = load_catalog(tmp_path, known_tools=frozenset(default_tools().names))
    workflow = catalog.get("plan-implement-review")
    second = workflow.movements[1].name
    provider = ScriptedProvider(
        [
            reply(call("transition", next=second, reason="planned")),
            reply(call("complete", **ASK)),
            reply(call("complete", status="done", summary="done with the answer")),
        ]
    )
    editor = MemoryEditor()
    session = session_for(tmp_path, provider, editor, workflow=workflow)
    first = await session.run()
    assert first.stop_reason == "needs_user_input"
    assert session.stopped_in == second
    assert first.missing_info == "the new name"

    outcome = await session.resume("total_of")
    assert outcome.stop_reason == "end_turn"
    assert outcome.message == "done with the answer"
    last_request = provider.requests[-1].messages
    answer = [m for m in last_request if isinstance(m, UserMessage)][-1]
    assert isinstance(answer, UserMessage) and answer.tag == "answer"
    assert answer.content == "The person answered your question (the new name): total_of"
    # No new movement prompt: the resumed movement goes on where it stopped.
    assert not any(
        isinstance(m, UserMessage) and m.tag == "movement" and second in m.content
        for m in last_request[last_request.index(answer) :]
    )
    resumed = [e for e in editor.events if isinstance(e, SessionResumed)]
    assert resumed == [SessionResumed(after="needs_user_input", reply="total_of")]


async def test_waiting_human_from_a_tool_result_ends_the_movement(tmp_path: Path) -> None:
    browser = FakeBrowser()
    provider = ScriptedProvider(
        [
            reply(call("browse_interactive", "b1"), call("read_file", "r1", path="x")),
            reply(call("browse_interactive", "b2")),
            reply(content="logged in"),
        ]
    )
    editor = MemoryEditor()
    session = session_for(
        tmp_path,
        provider,
        editor,
        tools=ToolRegistry([browser]),
        settings=SessionSettings(gated_tools=frozenset()),
    )
    outcome = await session.run()
    assert outcome.stop_reason == "waiting_human"
    assert outcome.browser_session_id == "br-1"
    assert outcome.url == "http://x/"
    # The rest of the batch is answered, not run.
    results = {m.tool_call_id: m for m in session.messages if isinstance(m, ToolMessage)}
    assert "not run" in results["r1"].content
    end = [e for e in editor.events if isinstance(e, SessionFinished)][-1]
    assert end.browser_session_id == "br-1"

    final = await session.resume("")
    assert final.stop_reason == "end_turn"
    note = [m for m in session.messages if isinstance(m, UserMessage)][-1]
    assert "browser session br-1" in note.content
    assert browser.calls == 2


async def test_each_run_has_its_own_step_budget(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [reply(call("list_files", "a", path=".")), reply(call("complete", **ASK))]
        + [reply(call("list_files", f"l{i}", path=".", pattern=f"{i}*")) for i in range(3)]
    )
    session = session_for(tmp_path, provider, MemoryEditor(), settings=SessionSettings(max_steps=2))
    assert (await session.run()).stop_reason == "needs_user_input"
    outcome = await session.resume("go on")
    assert outcome.stop_reason == "max_steps"
    assert session.steps == 4


async def test_gate_remembers_always_and_times_out(tmp_path: Path) -> None:
    store = PermissionStore(tmp_path / "ws", directory=tmp_path / "rules")
    editor = MemoryEditor(
        permissions=[PermissionAnswer(outcome="selected", option="reject_always"), None]
    )
    gate = PermissionGate(editor, store=store, gated=frozenset({"run_command"}), timeout_s=0.2)
    provider = ScriptedProvider(
        [
            reply(call("run_command", "c1", command="true")),
            reply(call("run_command", "c2", command="echo again")),
            reply(content="gave up"),
        ]
    )
    session = session_for(tmp_path, provider, editor, permissions=gate)
    await session.run()
    decided = [e for e in editor.events if isinstance(e, PermissionDecided)]
    assert [(d.verdict, d.option) for d in decided] == [
        ("rejected", "reject_always"),
        ("rejected", "remembered"),
    ]
    assert len(editor.asked) == 1
    assert store.rule("run_command") == "reject"

    # A fresh store on another workspace asks; no answer → the distinct timeout outcome.
    other = PermissionGate(
        editor,
        store=PermissionStore(tmp_path / "other", directory=tmp_path / "rules"),
        gated=frozenset({"run_command"}),
        timeout_s=0.2,
    )
    provider2 = ScriptedProvider(
        [reply(call("run_command", "c3", command="true")), reply(content="ok")]
    )
    session2 = session_for(tmp_path, provider2, editor, permissions=other)
    await session2.run()
    [timeout] = [m for m in session2.messages if isinstance(m, ToolMessage)]
    assert "timed out after 0.2 s" in timeout.content


async def test_restore_state_from_a_transcript(tmp_path: Path) -> None:
    recorder = TranscriptRecorder.start(
        session_id="s1",
        task="do it",
        root=tmp_path,
        workflow="default",
        model="openai/x",
        directory=tmp_path / "t",
    )
    provider = ScriptedProvider(
        [reply(call("list_files", "a", path=".")), reply(call("complete", **ASK))]
    )
    session = session_for(tmp_path, provider, MemoryEditor(), recorder=recorder)
    await session.run()
    recorder.close()
    state = restore_state(read_transcript(tmp_path / "t" / "s1.jsonl"))
    assert state.start.task == "do it"
    assert state.last is not None and state.last.stop_reason == "needs_user_input"
    assert state.stopped_in is not None
    assert state.steps == 2
    assert [type(m).__name__ for m in state.history][:2] == ["SystemMessage", "UserMessage"]


def test_resume_message_after_a_restart_says_the_browser_is_gone() -> None:
    from cadenza.engine.session import resume_message
    from cadenza.schema.outcome import SessionOutcome

    outcome = SessionOutcome(
        stop_reason="waiting_human", message="log in", steps=1, browser_session_id="br-1"
    )
    live = resume_message(outcome, "I logged in")
    assert live.startswith("The person is done in the browser (browser session br-1). They said")
    assert "I logged in." in live
    after = resume_message(outcome, "", restored=True)
    assert "br-1 is gone" in after and "open the page again" in after
