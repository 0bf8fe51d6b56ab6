"""Movements: control tools, step bounds, allowed tools, checkpoints, cache routing, transcripts."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.events import ToolCacheLookup
from cadenza.engine.history import check_strict
from cadenza.engine.journal import TranscriptRecorder
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.transcript import history_from_records, read_transcript
from cadenza.engine.workflows import Workflow, parse_workflow
from cadenza.messages import ToolMessage, UserMessage
from tests.doubles import LoopingProvider, MemoryEditor, ScriptedProvider, call, reply

TWO = parse_workflow(
    """
name = "two"
[[movements]]
name = "look"
tools = ["read_file"]
max_steps = 2
default_next = "fix"
[[movements]]
name = "fix"
default_next = "ABORT"
""",
    "test",
)


def session(
    tmp_path: Path, provider: ScriptedProvider, workflow: Workflow = TWO, **kw: object
) -> tuple[Session, MemoryEditor]:
    editor = MemoryEditor()
    return Session(
        session_id="s",
        task="task",
        root=tmp_path,
        provider=provider,
        editor=editor,
        workflow=workflow,
        settings=SessionSettings(**kw),
    ), editor  # type: ignore[arg-type]


def results(s: Session) -> list[ToolMessage]:
    return [m for m in s.messages if isinstance(m, ToolMessage)]


async def test_unknown_transition_target_is_an_error_result(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            reply(call("transition", "t1", next="deploy", reason="go")),
            reply(call("transition", "t2", next="fix", reason="go")),
            reply(content="fixed"),
        ]
    )
    s, editor = session(tmp_path, provider)
    outcome = await s.run()
    first = results(s)[0]
    assert first.is_error and "'deploy' is not a movement" in first.content
    assert "look, fix" in first.content
    # fix ends without a control call: default_next ABORT
    assert outcome.stop_reason == "aborted"
    assert [e.movement for e in editor.events if e.kind == "movement"] == ["look", "fix"]


async def test_movement_step_bound_follows_default_next(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    provider = ScriptedProvider(
        [
            reply(call("read_file", "r1", path="a.txt")),
            reply(call("read_file", "r2", path="a.txt", limit=5)),
            reply(call("complete", "c", status="done", summary="ok")),
        ]
    )
    s, editor = session(tmp_path, provider)
    outcome = await s.run()
    assert outcome.stop_reason == "end_turn"
    movements = [e for e in editor.events if e.kind == "movement"]
    assert [m.movement for m in movements] == ["look", "fix"]
    assert "step bound" in movements[1].reason
    checkpoints = [m for m in s.messages if isinstance(m, UserMessage) and m.tag == "checkpoint"]
    assert len(checkpoints) == 1 and "'look'" in checkpoints[0].content
    check_strict(s.messages)


async def test_tools_outside_the_movement_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    provider = ScriptedProvider(
        [
            reply(call("write_file", "w", path="a.txt", content="b")),
            reply(call("complete", "c", status="failed", summary="not allowed")),
        ]
    )
    s, _ = session(tmp_path, provider)
    outcome = await s.run()
    assert outcome.stop_reason == "failed"
    refused = results(s)[0]
    assert refused.is_error and "not available in movement 'look'" in refused.content
    assert (tmp_path / "a.txt").read_text() == "a\n"
    offered = {t.name for t in provider.requests[0].tools}
    assert offered == {"read_file", "transition", "complete", "update_plan"}


async def test_session_budget_still_ends_with_max_steps(tmp_path: Path) -> None:
    reads = [reply(call("read_file", path=f"f{i}.txt")) for i in range(6)]  # never a repeat
    s, _ = session(
        tmp_path,
        ScriptedProvider(reads),
        workflow=parse_workflow('name="w"\n[[movements]]\nname="a"', "t"),
        max_steps=4,
    )
    outcome = await s.run()
    assert outcome.stop_reason == "max_steps" and outcome.steps == 4


async def test_one_call_repeated_stops_at_the_stuck_limit(tmp_path: Path) -> None:
    """The same call forever: answered with notes, then the movement stops and asks."""
    s, _ = session(
        tmp_path,
        LoopingProvider(reply(call("list_files"))),
        workflow=parse_workflow('name="w"\n[[movements]]\nname="a"', "t"),
        max_steps=20,
    )
    outcome = await s.run()
    assert outcome.stop_reason == "needs_user_input" and outcome.steps == 4
    assert "list_files" in (outcome.missing_info or "")


async def test_read_cache_hits_and_edits_invalidate(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    (tmp_path / "b.txt").write_text("bee\n")
    one = parse_workflow('name="w"\n[[movements]]\nname="a"', "t")
    provider = ScriptedProvider(
        [
            reply(call("read_file", "r1", path="a.txt"), call("read_file", "r2", path="b.txt")),
            reply(call("edit_file", "e1", path="a.txt", old_string="one", new_string="two")),
            reply(call("read_file", "r3", path="b.txt")),  # unchanged: a cache hit
            reply(call("read_file", "r4", path="a.txt")),  # edited: read again
            reply(content="done"),
        ]
    )
    s, editor = session(tmp_path, provider, workflow=one)
    await s.run()
    lookups = {e.tool_call_id: e.hit for e in editor.events if isinstance(e, ToolCacheLookup)}
    assert lookups == {"r1": False, "r2": False, "r3": True, "r4": False}
    by_id = {m.tool_call_id: m.content for m in results(s)}
    assert "bee" in by_id["r3"] and "two" in by_id["r4"]


async def test_cache_misses_when_the_file_changed_behind_the_agent(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    one = parse_workflow('name="w"\n[[movements]]\nname="a"', "t")
    provider = ScriptedProvider(
        [
            reply(call("read_file", "r1", path="a.txt")),
            reply(call("list_files", "l1")),
            reply(call("read_file", "r2", path="a.txt")),
            reply(content="done"),
        ]
    )
    s, _ = session(tmp_path, provider, workflow=one)
    original = provider.complete

    async def person_edits_between(request, on_text=None):  # type: ignore[no-untyped-def]
        if len(provider.requests) == 2:
            (tmp_path / "a.txt").write_text("changed by the person, longer\n")
        return await original(request, on_text)

    provider.complete = person_edits_between  # type: ignore[method-assign]
    await s.run()
    assert "changed by the person" in results(s)[2].content


async def test_large_tool_result_is_truncated_with_a_note(tmp_path: Path) -> None:
    """A huge result through the per-result budget: a bounded result, no retry loop."""
    (tmp_path / "big.txt").write_text("".join(f"row {i} " + "z" * 70 + "\n" for i in range(400)))
    provider = ScriptedProvider(
        [reply(call("read_file", "r", path="big.txt")), reply(content="read")]
    )
    s, _ = session(
        tmp_path,
        provider,
        workflow=parse_workflow('name="w"\n[[movements]]\nname="a"', "t"),
        context_size=4096,
    )
    outcome = await s.run()
    assert outcome.stop_reason == "end_turn"
    content = results(s)[0].content
    assert len(content) <= 4096 and "[result truncated:" in content


async def test_session_writes_its_transcript(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws/a.txt").write_text("x\n")
    recorder = TranscriptRecorder.start(
        session_id="sess1",
        task="t",
        root=tmp_path / "ws",
        workflow="two",
        model="scripted/test",
        directory=tmp_path / "state",
    )
    provider = ScriptedProvider(
        [
            reply(call("read_file", "r", path="a.txt")),
            reply(call("transition", "t", next="fix", reason="r")),
            reply(call("complete", "c", status="done", summary="ok")),
        ]
    )
    editor = MemoryEditor()
    s = Session(
        session_id="sess1",
        task="t",
        root=tmp_path / "ws",
        provider=provider,
        editor=editor,
        workflow=TWO,
        recorder=recorder,
    )
    await s.run()
    recorder.close()
    records = read_transcript(tmp_path / "state" / "sess1.jsonl")
    kinds = [r.type for r in records]
    assert kinds[0] == "session_start" and kinds[-1] == "session_end"
    assert "checkpoint" in kinds
    history = history_from_records(records)
    assert [m.role for m in history] == [m.role for m in s.messages]
    check_strict(history)
