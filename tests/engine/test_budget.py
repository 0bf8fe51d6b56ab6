"""The time budget: each reply's token bound, a repeating reply stopped while it streams, and
the run's wall time, with scripted models that never stop on their own."""

from __future__ import annotations

import math
import time
from pathlib import Path

import anyio
import pytest

from cadenza.engine.budget import (
    CALL_TOKENS,
    FLOOR_TOKENS,
    MARGIN_TOKENS,
    RunClock,
    duration,
    files_in_play,
    reply_tokens,
)
from cadenza.engine.events import Activity, ContractRepaired, ModelReplied, ToolCallFinished
from cadenza.engine.loop import BudgetSpent
from cadenza.engine.pipeline import REPEATING_ARGUMENTS
from cadenza.engine.reply_watch import MIN_SPAN, REPORT_EVERY_S, ReplyWatch, repeated_tail
from cadenza.engine.request import REPAIR_REPEATING
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import LOCAL_LOOP, LoopSettings
from cadenza.messages import AssistantMessage, AssistantReply, ToolCall, UserMessage
from cadenza.providers.base import ModelRequest, TextSink
from tests.doubles import MemoryEditor, ScriptedProvider, StreamingProvider, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete")
"""The small-model profile speaking tool calls, as these scripted models do."""

EDIT_HEAD = (
    '{"content": "", "tool_calls": [{"name": "edit_file", "arguments": {"path": "a.py", '
    '"old_string": "x = 1", "new_string": "'
)
"""The start of an envelope whose edit's new text then runs away."""


def make_session(
    root: Path,
    provider: ScriptedProvider,
    *,
    loop: LoopSettings = TOOL_LOOP,
    max_steps: int = 10,
    budget_s: float | None = None,
    task: str = "Change a.py.",
    **settings: object,
) -> tuple[Session, MemoryEditor]:
    editor = MemoryEditor()
    session = Session(
        session_id="s1",
        task=task,
        root=root,
        provider=provider,
        editor=editor,
        settings=SessionSettings(
            loop=loop, max_steps=max_steps, time_budget_s=budget_s, **settings
        ),  # type: ignore[arg-type]
    )
    return session, editor


def events(editor: MemoryEditor, kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in editor.events if isinstance(e, kind)]


# --- a reply that repeats itself ------------------------------------------------------


def test_a_repeated_tail_is_found_and_real_code_is_not() -> None:
    assert repeated_tail("0, " * 200) == 3
    assert repeated_tail("start " + "    return x\\n" * 40) == len("    return x\\n")
    block = "".join(f"    line_{i} = {i}\\n" for i in range(12))
    assert repeated_tail("def f():\\n" + block * 3) == len(block)
    # Not loops: too short, counting up, code with repeated shapes, a separator line.
    assert repeated_tail("x = 0\\n" * 10) is None
    assert repeated_tail(", ".join(str(i) for i in range(500))) is None
    tests = "".join(f"    assert add({i}, {i}) == {2 * i}\\n" for i in range(40))
    assert repeated_tail(tests) is None
    assert repeated_tail("# " + "-" * 78 + "\\n") is None
    assert repeated_tail("") is None


async def test_a_reply_repeating_forever_is_stopped_while_it_streams(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = StreamingProvider(lambda i: "y = 2\\n", head=EDIT_HEAD)
    session, editor = make_session(tmp_path, provider, max_steps=2)
    started = time.monotonic()
    with anyio.fail_after(20):
        outcome = await session.run()
    assert time.monotonic() - started < 10
    assert outcome.stop_reason == "max_steps"
    # Two steps, each repaired once: four replies, each stopped soon after its tail repeated.
    assert len(provider.deltas) == 4
    assert all(n <= MIN_SPAN // len("y = 2\\n") + 8 for n in provider.deltas)
    assert [r.finish_reason for r in events(editor, ModelReplied)] == ["repetition"] * 4
    assert [(r.reason, r.recovered) for r in events(editor, ContractRepaired)] == [
        ("cut", False)
    ] * 2
    # The repair says why, and samples so that the loop does not come back the same way.
    retry = provider.requests[1]
    assert retry.messages[-1] == UserMessage(tag="repair", content=REPAIR_REPEATING)
    assert retry.frequency_penalty is not None and retry.watch is not provider.requests[0].watch
    # Nothing half-done was written: the call is answered, not run.
    answered = [e for e in events(editor, ToolCallFinished) if e.observation == "cut"]
    assert [a.content for a in answered] == [REPEATING_ARGUMENTS] * 2
    assert (tmp_path / "a.py").read_text() == "x = 1\n" and not editor.edits


async def test_the_watch_is_off_without_reply_budget_but_progress_is_shown(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider([reply(call("complete", status="done", summary="ok"))])
    loop = TOOL_LOOP.replace(reply_budget=False, checks="off")
    session, _ = make_session(tmp_path, provider, loop=loop)
    await session.run()
    watch = provider.requests[0].watch
    assert isinstance(watch, ReplyWatch) and not watch.stop_repeats
    assert not any(watch("0, ") for _ in range(1000))


async def test_the_watch_reports_what_the_model_writes(tmp_path: Path) -> None:
    session, editor = make_session(tmp_path, ScriptedProvider([]))
    now = [100.0]
    session.rt.clock = RunClock(budget_s=600, now=lambda: now[0])
    watch = ReplyWatch(session.rt, stop_repeats=True, now=lambda: now[0])
    watch('{"content": "", "tool_calls": [{"name": "edit_file", ')
    assert not events(editor, Activity)  # not before REPORT_EVERY_S
    now[0] += REPORT_EVERY_S
    for piece in ('"arguments": {"path": "a.py"', ', "new_string": "def f'):
        watch(piece)
    [activity] = events(editor, Activity)
    assert (activity.doing, activity.tokens, activity.budget_s) == ("writing an edit", 2, 600)


class SlowReader(ScriptedProvider):
    """Answers after a silence (a model server reading a long request), then ends the turn."""

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        self.requests.append(request)
        await anyio.sleep(0.6)
        return reply(content="nothing to do")


async def test_progress_is_reported_while_the_request_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cadenza.engine.reply_watch.REPORT_EVERY_S", 0.1)
    session, editor = make_session(tmp_path, SlowReader([]), budget_s=60)
    with anyio.fail_after(20):
        await session.run()
    reports = events(editor, Activity)
    assert len(reports) >= 3  # the clock moves before the first token
    assert {(a.doing, a.tokens) for a in reports} == {("reading the conversation", 0)}
    assert reports[-1].elapsed_s > reports[0].elapsed_s


# --- the run's wall time --------------------------------------------------------------


async def test_a_reply_that_never_ends_is_stopped_at_the_time_budget(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    counting = StreamingProvider(lambda i: f"{i}, ", head=EDIT_HEAD)  # no exact repeat
    session, editor = make_session(tmp_path, counting, budget_s=1.0)
    started = time.monotonic()
    with anyio.fail_after(20):
        outcome = await session.run()
    assert 1.0 <= time.monotonic() - started < 6
    assert outcome.stop_reason == "max_steps" and outcome.steps == 1
    assert outcome.message == (
        "stopped at the time budget (1 s) after 1 step; nothing changed; not finished"
    )
    assert counting.deltas[0] > 10  # it was streaming when it was stopped
    # Tests that ran before any change are said to be so, not "after the last change".
    session.rt.tests_verdict = "3 failed, 2 passed"
    assert session._spent(BudgetSpent(spent="time")).endswith(
        "nothing changed; the tests before any change: 3 failed, 2 passed; not finished"
    )
    # The stopped reply never entered the history, and nothing waits for a tool result.
    assert not any(isinstance(m, AssistantMessage) for m in session.messages)
    assert not editor.edits


class Wanderer(ScriptedProvider):
    """Reads one more file each step, slowly, and never ends the task."""

    def __init__(self, delay_s: float) -> None:
        super().__init__([])
        self.delay_s = delay_s

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        self.requests.append(request)
        await anyio.sleep(self.delay_s)
        return reply(call("read_file", f"r{len(self.requests)}", path=f"n{len(self.requests)}.py"))


async def test_a_task_that_never_ends_stops_at_the_time_budget(tmp_path: Path) -> None:
    provider = Wanderer(0.1)
    session, _ = make_session(tmp_path, provider, max_steps=1000, budget_s=1.0)
    started = time.monotonic()
    with anyio.fail_after(20):
        outcome = await session.run()
    elapsed = time.monotonic() - started
    assert 1.0 <= elapsed < 6
    assert outcome.stop_reason == "max_steps"
    assert 3 <= outcome.steps < 1000
    assert outcome.message.startswith("stopped at the time budget (1 s) after ")
    # Every call of the history has its result: the run ended between steps.
    calls = [
        c.id for m in session.messages if isinstance(m, AssistantMessage) for c in m.tool_calls
    ]
    results = [m.tool_call_id for m in session.messages if m.role == "tool"]
    assert calls == results and session.rt.clock.spent


def test_the_clock_does_not_count_waiting_for_the_person() -> None:
    now, waited = [0.0], [5.0]
    clock = RunClock(budget_s=60, now=lambda: now[0], waited=lambda: waited[0])
    now[0] = 50.0
    waited[0] = 35.0  # 30 s of it in a permission prompt
    assert clock.elapsed_s == 20.0 and clock.left_s == 40.0 and not clock.spent
    now[0] = 100.0
    assert clock.spent and clock.left_s == 0.0
    assert RunClock().left_s == math.inf and not RunClock().spent
    assert [duration(s) for s in (0.4, 45, 60, 185, 600)] == [
        "0 s",
        "45 s",
        "1 min",
        "3 min 5 s",
        "10 min",
    ]


# --- the reply's token bound ----------------------------------------------------------


def test_the_reply_bound_follows_the_largest_file_in_play() -> None:
    assert reply_tokens([], free_tokens=8000) == FLOOR_TOKENS
    assert reply_tokens([300, 3000], free_tokens=8000) == CALL_TOKENS + 2000 + MARGIN_TOKENS
    assert reply_tokens([30_000], free_tokens=6000) == 6000  # what the context leaves
    assert reply_tokens([30_000], free_tokens=100) == FLOOR_TOKENS


def test_files_in_play_are_named_read_and_changed_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "named.py").write_text("n" * 100)
    (tmp_path / "read.py").write_text("r" * 200)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    outside = tmp_path.parent / "outside-budget.txt"
    outside.write_text("o" * 5000)
    reads = [
        call("read_file", "c1", path="read.py"),
        call("read_file", "c2", path=str(outside)),
        call("read_file", "c3", path="loop"),
        ToolCall(id="c4", name="read_file", arguments="{not json"),
    ]
    history = [AssistantMessage(tool_calls=reads)]
    written = {tmp_path / "changed.py": "c" * 50}
    sizes = files_in_play(tmp_path, history, ["named.py", "missing.py"], written)  # type: ignore[arg-type]
    assert sorted(sizes) == [0, 50, 100, 200]  # the loop and the outside file: nothing


async def test_each_request_is_bounded_by_the_files_in_play(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 500)  # 3,000 characters, primed
    done = reply(call("complete", status="done", summary="ok"))
    provider = ScriptedProvider([done])
    session, _ = make_session(
        tmp_path, provider, task="Fix big.py.", loop=TOOL_LOOP.replace(checks="off")
    )
    await session.run()
    assert provider.requests[0].max_tokens == CALL_TOKENS + 2000 + MARGIN_TOKENS
    # A configured bound wins; without reply_budget the session's bound (None) stays.
    for settings, expected in (({"max_tokens": 300}, 300), ({}, None)):
        provider = ScriptedProvider([done])
        loop = TOOL_LOOP.replace(checks="off", reply_budget=bool(settings))
        session, _ = make_session(tmp_path, provider, task="Fix big.py.", loop=loop, **settings)
        await session.run()
        assert provider.requests[0].max_tokens == expected


@pytest.mark.parametrize("reason", ["length", "repetition"])
async def test_a_cut_reply_is_repaired_with_twice_the_bound(tmp_path: Path, reason: str) -> None:
    cut = ToolCall(id="c0", name="edit_file", arguments='{"path": "a.py", "old_str')
    done = reply(call("complete", status="done", summary="ok"))
    provider = ScriptedProvider([reply(cut, finish=reason), done])  # type: ignore[arg-type]
    session, _ = make_session(tmp_path, provider, loop=TOOL_LOOP.replace(checks="off"))
    await session.run()
    first, retry = provider.requests
    assert first.max_tokens == FLOOR_TOKENS and retry.max_tokens == 2 * FLOOR_TOKENS
    note = retry.messages[-1]
    assert isinstance(note, UserMessage)
    assert ("repeating" in note.content) == (reason == "repetition")
