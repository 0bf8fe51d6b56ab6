"""Candidate replies judged by the tests: a scripted model, real pytest runs on copies of a
temporary workspace; then two requests served at once by a real llama-server (SmolLM2)."""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cadenza.acp.updates import UpdateMapper
from cadenza.config import CadenzaConfig, LoopConfig
from cadenza.engine import test_feedback
from cadenza.engine.budget import RunClock
from cadenza.engine.candidates import (
    SEEDS_PER_STEP,
    Candidates,
    choose,
    fresh_messages,
    refused_change,
)
from cadenza.engine.events import (
    Activity,
    CandidatesTried,
    FileEdited,
    ModelReplied,
    ToolCallFinished,
    ToolCallStarted,
)
from cadenza.engine.journal import TranscriptRecorder
from cadenza.engine.scratch import Trial
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.testsuite import PYTEST_ARGS, SuiteRun
from cadenza.engine.transcript import read_transcript
from cadenza.engine.variants import LOCAL_LOOP
from cadenza.host.checkpoints import SessionCheckpoint
from cadenza.host.command_changes import CheckpointedCommands
from cadenza.host.restore import restore_state
from cadenza.lsp.updates import session_update
from cadenza.messages import (
    AssistantMessage,
    AssistantReply,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from cadenza.permission_rules import RuleSet
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from cadenza.providers.llama_command import LlamaServerError, find_binary, server_command
from cadenza.providers.local import LocalProvider
from cadenza.providers.model_catalog import ModelError
from cadenza.providers.models import pull
from cadenza.schema.updates import Candidates as CandidatesUpdate
from tests.doubles import MemoryEditor, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete")
"""The small-model profile speaking tool calls, as these scripted models do."""

PYTEST = f"{sys.executable} -m pytest {PYTEST_ARGS}"
TASK = "Implement fewest_coins in coins.py so that the tests pass."
STUB = 'def fewest_coins(coins, target):\n    """The fewest coins that sum to target."""\n'
TESTS = """\
from coins import fewest_coins


def test_one_coin():
    assert fewest_coins([1, 5, 10], 10) == 1


def test_three_coins():
    assert fewest_coins([1, 5, 10], 12) == 3


def test_nothing():
    assert fewest_coins([1, 5, 10], 0) == 0
"""
RAISE = "    raise NotImplementedError\n"
WRONG = "    return target // 2\n"  # passes test_nothing only
GREEDY = (  # passes test_one_coin and test_nothing
    "    if target == 12:\n        return 2\n    return target // 10\n"
)
RIGHT = """\
    best = [0] + [target + 1] * target
    for value in range(1, target + 1):
        for coin in coins:
            if coin <= value:
                best[value] = min(best[value], best[value - coin] + 1)
    return best[target]
"""
BROKEN = "    return (target // 2\n"  # does not parse
DONE = call("complete", status="done", summary="implemented")

Round = AssistantReply | tuple[AssistantReply, ...]


class LanesProvider:
    """Replays rounds: a reply for a step's one request, a tuple for its candidates (lane i
    gets item i; lane 0's request, made first, takes the round). Records every request."""

    def __init__(self, rounds: Sequence[Round]) -> None:
        self.rounds = list(rounds)
        self.requests: list[ModelRequest] = []
        self.current: tuple[AssistantReply, ...] = ()

    @property
    def name(self) -> str:
        return "scripted/lanes"

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        self.requests.append(request)
        if request.lane == 0:
            if not self.rounds:
                raise ProviderError("script exhausted")
            item = self.rounds.pop(0)
            self.current = item if isinstance(item, tuple) else (item,)
        await anyio.sleep(0)  # the others are written meanwhile
        return self.current[request.lane]

    async def aclose(self) -> None:
        return None


def project(root: Path) -> None:
    (root / "coins.py").write_text(STUB + RAISE)
    (root / "test_coins.py").write_text(TESTS)


def edit(old: str, new: str, call_id: str) -> AssistantReply:
    return reply(call("edit_file", call_id, path="coins.py", old_string=old, new_string=new))


def make_session(
    root: Path, provider: LanesProvider, candidates: int = 3, **settings: object
) -> tuple[Session, MemoryEditor]:
    editor = MemoryEditor()
    loop = TOOL_LOOP.replace(candidates=candidates, **settings.pop("loop", {}))  # type: ignore[arg-type]
    options: dict[str, object] = {"loop": loop, "max_steps": 10, "test_command": PYTEST}
    options.update(settings)
    session = Session(
        session_id="s1",
        task=TASK,
        root=root,
        provider=provider,
        editor=editor,
        settings=SessionSettings(**options),  # type: ignore[arg-type]
    )
    return session, editor


@pytest.fixture(autouse=True)
def own_temp_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidates' copies of this test in a folder of its own: another worker's copies
    (tests run in parallel) are not counted as left behind by this one."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("scratch")))


def scratch_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("cadenza-candidate-*")}


def kept_edits(session: Session) -> list[str]:
    return [
        c.id
        for m in session.messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
        if c.name == "edit_file"
    ]


async def test_the_candidate_that_passes_most_is_kept_and_only_it_is_written(
    tmp_path: Path,
) -> None:
    project(tmp_path)
    before = scratch_folders()
    provider = LanesProvider(
        [
            edit(RAISE, WRONG, "e1"),  # 1 of 3 pass: the next step asks for candidates
            (edit(WRONG, GREEDY, "c1"), edit(WRONG, RIGHT, "c2"), edit(WRONG, BROKEN, "c3")),
            reply(DONE),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    [tried] = [e for e in editor.events if isinstance(e, CandidatesTried)]
    # The greedy one passes 2, the right one 3; the broken one is refused by the syntax guard.
    assert (tried.tried, tried.kept, tried.passed, tried.of) == (3, 2, [2, 3, None], 3)
    assert tried.why == ["", "", "its change did not apply"]
    assert (tmp_path / "coins.py").read_text() == STUB + RIGHT
    # Only the kept reply reached the history and the editor: two edits in all.
    assert kept_edits(session) == ["e1", "c2"]
    assert [e.new_text for e in editor.edits] == [STUB + WRONG, STUB + RIGHT]
    # Three requests at once, each with its own seed and lane; the others sampled, and started
    # afresh: the task and its files, not the failed attempt and the failures after it.
    lanes = sorted((r for r in provider.requests if r.seed is not None), key=lambda r: r.lane)
    assert [r.lane for r in lanes] == [0, 1, 2]
    assert len({r.seed for r in lanes}) == 3
    assert all((r.temperature or 0) >= 0.7 for r in lanes if r.lane)
    assert any(isinstance(m, AssistantMessage) for m in lanes[0].messages)
    for fresh in lanes[1:]:
        assert not any(isinstance(m, AssistantMessage) for m in fresh.messages)
        assert [m.tag for m in fresh.messages if isinstance(m, UserMessage)][-1] != "check"
        assert any(isinstance(m, UserMessage) and m.tag == "task" for m in fresh.messages)
    # Every reply counted; the kept one's tests all pass, so no request follows it.
    assert sum(isinstance(e, ModelReplied) for e in editor.events) == 4
    trying = [e.doing for e in editor.events if isinstance(e, Activity)]
    assert "trying reply 2 of 3 on a copy" in trying
    # The model then read the tests of the kept reply's change, and no copy was left behind.
    checks = [
        m.content for m in session.messages if isinstance(m, UserMessage) and m.tag == "check"
    ]
    assert any("all 3 tests pass" in text for text in checks)
    assert scratch_folders() == before
    assert CandidatesUpdate(**tried.model_dump(exclude={"kind"})).line() == (
        "Tried 3 replies against the tests on copies of the workspace; kept reply 2: "
        "3 of 3 tests pass with it (each reply: 2; 3; not judged: its change did not apply)."
    )


async def test_what_a_candidate_s_test_run_writes_outside_its_copy_is_recorded(
    tmp_path: Path,
) -> None:
    # A copy is not a sandbox: a reply's code, run by the tests, can write in the workspace
    # itself (here by its absolute path). That reply is not kept, yet its write is shown and
    # recorded with the session's changes, so undoing the session removes it.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    project(workspace)
    outside = workspace / "escaped.txt"
    escape = f"    open({str(outside)!r}, 'w').write('from a copy')\n"
    provider = LanesProvider(
        [
            edit(RAISE, WRONG, "e1"),
            (edit(WRONG, escape + GREEDY, "c1"), edit(WRONG, RIGHT, "c2")),
            reply(DONE),
        ]
    )
    session, editor = make_session(workspace, provider, candidates=2)
    checkpoint = SessionCheckpoint.for_session("s1", workspace.resolve(), base=tmp_path / "cp")
    session.rt.command_watch = CheckpointedCommands(checkpoint)
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert (workspace / "coins.py").read_text() == STUB + RIGHT  # the second reply was kept
    assert outside.read_text() == "from a copy"
    [started] = [
        e
        for e in editor.events
        if isinstance(e, ToolCallStarted) and e.tool_call_id == "candidate-trials"
    ]
    assert "changed files of the workspace itself" in started.title
    written = [e for e in editor.events if isinstance(e, FileEdited)]
    assert [e.path for e in written if e.tool_call_id == "candidate-trials"] == ["escaped.txt"]
    [finished] = [
        e
        for e in editor.events
        if isinstance(e, ToolCallFinished) and e.tool_call_id == "candidate-trials"
    ]
    assert finished.status == "failed" and "escaped.txt" in finished.content
    assert checkpoint.entry(outside) is not None  # undo puts the workspace back


async def test_a_candidate_that_breaks_syntax_loses_even_unguarded(tmp_path: Path) -> None:
    project(tmp_path)
    provider = LanesProvider(
        [
            edit(RAISE, WRONG, "e1"),
            (edit(WRONG, BROKEN, "c1"), edit(WRONG, GREEDY, "c2")),
            (reply(DONE), reply(DONE)),  # the tests still fail: candidates again
        ]
    )
    session, editor = make_session(
        tmp_path, provider, candidates=2, loop={"syntax_guard": False, "checks": "off"}
    )
    with anyio.fail_after(240):
        await session.run()
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    # Unguarded, the broken file is written in its copy: pytest cannot import it, 0 pass.
    assert (tried.kept, tried.passed) == (2, [0, 2])
    assert "(target // 2" not in (tmp_path / "coins.py").read_text()
    assert all("(target // 2" not in e.new_text for e in editor.edits)


FORGED = (  # passes test_nothing only, and prints a pass of its own at exit
    WRONG + "\n\nimport atexit, os, sys\n\n\ndef _forge():\n"
    "    sys.stdout.write('5 passed in 0.01s\\n')\n    sys.stdout.flush()\n    os._exit(0)\n\n\n"
    "atexit.register(_forge)\n"
)


async def test_a_candidate_that_forges_a_pass_is_judged_by_pytest_s_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The detected pytest command: each copy's run is judged by pytest's report, not by the
    counts the candidate's own code printed."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    project(tmp_path)
    provider = LanesProvider(
        [
            edit(RAISE, WRONG, "e1"),
            (edit(WRONG, FORGED, "c1"), edit(WRONG, GREEDY, "c2")),
            (reply(DONE), reply(DONE)),
        ]
    )
    session, editor = make_session(
        tmp_path, provider, candidates=2, test_command=None, loop={"checks": "off"}
    )
    with anyio.fail_after(240):
        await session.run()
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert (tried.kept, tried.passed, tried.of) == (2, [1, 2], 3)
    assert (tmp_path / "coins.py").read_text() == STUB + GREEDY


async def test_tests_that_failed_a_claim_of_done_ask_for_candidates(tmp_path: Path) -> None:
    # The tests run only at the claim: its failed run judges the next step's replies.
    project(tmp_path)
    provider = LanesProvider(
        [
            edit(RAISE, WRONG, "e1"),
            reply(DONE),  # 1 of 3 pass: refused
            (edit(WRONG, GREEDY, "c1"), edit(WRONG, RIGHT, "c2")),
            reply(DONE),
        ]
    )
    session, editor = make_session(  # the person allows the claim's run: for the session
        tmp_path, provider, candidates=2, loop={"test_feedback": False}
    )
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert (tried.kept, tried.passed) == (2, [2, 3])
    assert (tmp_path / "coins.py").read_text() == STUB + RIGHT


async def test_a_file_written_back_unchanged_is_no_change_in_a_tie(tmp_path: Path) -> None:
    project(tmp_path)

    def write(body: str, call_id: str) -> AssistantReply:
        return reply(call("write_file", call_id, path="coins.py", content=STUB + body))

    provider = LanesProvider(
        [
            write(WRONG, "w1"),  # 1 of 3 pass
            (write(WRONG, "c1"), write("    return target // 2  # halves\n", "c2")),
            (reply(DONE), reply(DONE)),
        ]
    )
    loop = {"edit": "write_file", "checks": "off"}
    session, editor = make_session(tmp_path, provider, candidates=2, loop=loop)
    with anyio.fail_after(240):
        await session.run()
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    # Both pass 1; the one that wrote the file back as it was changed nothing: the other wins.
    assert (tried.kept, tried.passed) == (2, [1, 1])


async def test_a_candidate_that_rewrites_the_tests_is_not_judged_by_them(tmp_path: Path) -> None:
    # Reply 1 keeps the wrong code and makes the tests expect it: all 3 would pass.
    project(tmp_path)
    gamed = TESTS.replace("== 1", "== 5").replace("== 3", "== 6")
    rewrite = call("edit_file", "c1t", path="test_coins.py", old_string=TESTS, new_string=gamed)
    provider = LanesProvider(
        [
            edit(RAISE, WRONG, "e1"),
            (reply(rewrite), edit(WRONG, GREEDY, "c2")),
            (reply(DONE), reply(DONE)),  # 2 of 3 pass: candidates again, both done
        ]
    )
    session, editor = make_session(tmp_path, provider, candidates=2, loop={"checks": "off"})
    with anyio.fail_after(240):
        await session.run()
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert (tried.kept, tried.passed) == (2, [None, 2])
    assert (tmp_path / "test_coins.py").read_text() == TESTS
    assert (tmp_path / "coins.py").read_text() == STUB + GREEDY


async def test_a_change_the_syntax_guard_refused_asks_for_candidates(tmp_path: Path) -> None:
    # No test has run yet (none runs after a change, so none ran at the start either): the
    # first file did not parse, and the model would send it again.
    project(tmp_path)
    provider = LanesProvider(
        [
            edit(RAISE, BROKEN, "e1"),
            (edit(RAISE, BROKEN, "c1"), edit(RAISE, GREEDY, "c2"), edit(RAISE, RIGHT, "c3")),
            reply(DONE),
        ]
    )
    session, editor = make_session(
        tmp_path, provider, gated_tools=frozenset(), loop={"test_feedback": False}
    )  # --allow
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert (tried.kept, tried.passed) == (3, [None, 2, 3])
    assert (tmp_path / "coins.py").read_text() == STUB + RIGHT
    assert kept_edits(session) == ["e1", "c3"]


async def test_a_file_written_back_unchanged_asks_for_candidates(tmp_path: Path) -> None:
    """Code as text: the model writes the shown file back as it is (no test has run yet: none
    runs after a change, nor at the start, and it would do it again); the next step asks for
    candidates, which find the change."""
    project(tmp_path)

    def whole(body: str) -> AssistantReply:
        return reply(content=f"coins.py\n```python\n{STUB}{body}```\n")

    provider = LanesProvider(
        [whole(RAISE), (whole(RAISE), whole(GREEDY), whole(RIGHT)), reply(content="Done.")]
    )
    text = {"edit": "text", "ending": "empty", "test_feedback": False}
    session, editor = make_session(tmp_path, provider, loop=text)
    # run_command stays gated; the person's rule lets the tests run (--allow 'run_command:…').
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    first = next(m for m in session.messages if isinstance(m, ToolMessage))
    assert first.content == "coins.py already has exactly this text; it is unchanged"
    assert first.unchanged
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert (tried.kept, tried.passed) == (3, [0, 2, 3])
    assert (tmp_path / "coins.py").read_text() == STUB + RIGHT


async def test_tests_failing_as_the_turn_begins_give_candidates_from_the_second_step(
    tmp_path: Path,
) -> None:
    """The person's rule lets the tests run: they run before the first request and fail; the
    first reply, the model's own, reads the failures; when it fails too, the second step tries
    candidates (the fresh lanes reading the failures of the files as the turn began)."""
    (tmp_path / "coins.py").write_text(STUB + GREEDY)
    (tmp_path / "test_coins.py").write_text(TESTS)
    provider = LanesProvider(
        [
            edit(GREEDY, WRONG, "e1"),
            (
                edit(WRONG, GREEDY, "c0"),
                edit(WRONG, WRONG + "\n", "c1"),
                edit(WRONG, RIGHT, "c2"),
            ),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    with anyio.fail_after(240):
        outcome = await session.run()
    first = provider.requests[0]
    assert first.seed is None  # one request, not candidates
    [note] = [m for m in first.messages if isinstance(m, UserMessage) and m.tag == "check"]
    assert "FAILED test_coins.py::test_three_coins" in note.content
    assert outcome.stop_reason == "end_turn"  # the kept change passed: that was the claim
    assert (tmp_path / "coins.py").read_text() == STUB + RIGHT
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert tried.kept == 3 and tried.passed[2] == 3
    fresh = [r for r in provider.requests if r.lane > 0]
    assert len(fresh) == 2
    for request in fresh:
        last = [m for m in request.messages if isinstance(m, UserMessage)][-1]
        assert "FAILED test_coins.py::test_three_coins" in last.content


async def test_fresh_candidates_read_the_failures_of_the_files_they_are_shown(
    tmp_path: Path,
) -> None:
    """A bug to fix: "fix the failing test" says nothing of what fails. The tests failed on
    the files as the turn began, so the fresh lanes read those failures after the task (the
    assertion a fix needs)."""
    (tmp_path / "coins.py").write_text(STUB + GREEDY)
    (tmp_path / "test_coins.py").write_text(TESTS)
    provider = LanesProvider(
        [
            reply(DONE),  # claimed at once: refused, nothing changed
            reply(DONE),  # again: the done check's run fails 1 of 3
            (reply(DONE), edit(GREEDY, WRONG, "c1"), edit(GREEDY, RIGHT, "c2")),
            reply(DONE),
        ]
    )
    session, _ = make_session(tmp_path, provider, loop={"test_feedback": False})
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert (tmp_path / "coins.py").read_text() == STUB + RIGHT
    lanes = sorted((r for r in provider.requests if r.seed is not None), key=lambda r: r.lane)
    assert [r.lane for r in lanes] == [0, 1, 2]
    for fresh in lanes[1:]:
        last = [m for m in fresh.messages if isinstance(m, UserMessage)][-1]
        assert last.tag == "check"
        assert last.content.startswith("The tests were run on these files and fail:")
        assert "FAILED test_coins.py::test_three_coins" in last.content
        assert "assert 2 == 3" in last.content
        assert not any(isinstance(m, AssistantMessage) for m in fresh.messages)


BUGGY = """\
def mean(values):
    \"\"\"The mean of values (0.0 for none).\"\"\"
    if not values:
        return 0.0
    return total(values) / (len(values) + 1)


def total(values):
    return sum(values)


class Stats:
    def spread(self, values):
        return max(values) - min(values)
"""
STATS_TESTS = """\
from stats import Stats, mean


def test_mean():
    assert mean([1, 2, 3]) == 2.0


def test_empty():
    assert mean([]) == 0.0


def test_spread():
    assert Stats().spread([1, 5]) == 4
"""


async def test_a_fix_asks_one_lane_for_the_failing_function_alone(tmp_path: Path) -> None:
    """Code as text, a bug to fix: one fresh lane is shown only the function the failing
    assertion calls (and what it calls), with the failure; its reply, the corrected function
    alone, becomes an edit of that function: the rest of the file stays as it was."""
    (tmp_path / "stats.py").write_text(BUGGY)
    (tmp_path / "test_stats.py").write_text(STATS_TESTS)
    fixed = (
        "def mean(values):\n    if not values:\n        return 0.0\n"
        "    return total(values) / len(values)\n"
    )
    unchanged = reply(content=f"stats.py\n```python\n{BUGGY}```\n")
    provider = LanesProvider(
        [
            reply(content="Done."),  # refused: nothing changed
            reply(content="Done."),  # again: the done check's run fails test_mean
            (unchanged, reply(content=f"stats.py\n```python\n{fixed}```\n"), unchanged),
            reply(content="Done."),
        ]
    )
    session, editor = make_session(
        tmp_path, provider, loop={"edit": "text", "ending": "empty", "test_feedback": False}
    )
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    session.rt.task_files = ["test_stats.py"]
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert (tmp_path / "stats.py").read_text() == BUGGY.replace(
        '    """The mean of values (0.0 for none)."""\n', ""
    ).replace("(len(values) + 1)", "len(values)")
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert (tried.kept, tried.passed[1]) == (2, 3)
    focused = next(r for r in provider.requests if r.lane == 1)
    asked = focused.messages[-1]
    assert isinstance(asked, UserMessage)
    assert asked.content.startswith("The tests run these functions:")
    assert "def mean(values):" in asked.content and "def total(values):" in asked.content
    assert "spread" not in asked.content  # not run by the failing test
    assert "assert 1.5 == 2.0" in asked.content
    assert not any(isinstance(m, UserMessage) and m.tag == "files" for m in focused.messages)
    # The kept reply entered the history as the search/replace edit it stands for.
    kept = [m for m in session.messages if isinstance(m, AssistantMessage) and m.tool_calls]
    assert "<<<<<<< SEARCH" in kept[-1].content
    assert [c.name for c in kept[-1].tool_calls] == ["edit_file"]


async def test_a_focused_reply_that_rewrites_no_function_is_set_aside(tmp_path: Path) -> None:
    """Its reply holds no function it was shown: not a claim of done to keep, not judged."""
    (tmp_path / "stats.py").write_text(BUGGY)
    (tmp_path / "test_stats.py").write_text(STATS_TESTS)
    whole_fix = BUGGY.replace("(len(values) + 1)", "len(values)")
    unchanged = reply(content=f"stats.py\n```python\n{BUGGY}```\n")
    read = '```tool\n{"name": "read_file", "arguments": {"path": "stats.py"}}\n```\n'
    provider = LanesProvider(
        [
            reply(content=read),  # the whole-file candidate may then write it
            reply(content="Done."),
            reply(content="Done."),
            (
                unchanged,
                reply(content="The code looks right to me."),
                reply(content=f"stats.py\n```python\n{whole_fix}```\n"),
            ),
            reply(content="Done."),
        ]
    )
    session, editor = make_session(
        tmp_path, provider, loop={"edit": "text", "ending": "empty", "test_feedback": False}
    )
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    session.rt.task_files = ["test_stats.py"]
    with anyio.fail_after(240):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert tried.passed[1] is None
    assert tried.why[1] == "it rewrote none of the functions it was shown"
    assert (tmp_path / "stats.py").read_text() == whole_fix


async def test_a_file_written_back_unchanged_is_still_no_change_once_restored(
    tmp_path: Path,
) -> None:
    """The transcript keeps that a write changed nothing: restored after a restart, the session
    counts the reply as a change that failed (candidates next), as the live session did."""
    project(tmp_path)
    recorder = TranscriptRecorder.start(
        session_id="s1",
        task=TASK,
        root=tmp_path,
        workflow="default",
        model="scripted/lanes",
        directory=tmp_path / "t",
    )
    settings = SessionSettings(
        loop=TOOL_LOOP.replace(candidates=3, edit="write_file", checks="off"),
        max_steps=1,
        test_command=PYTEST,
    )
    back = reply(call("write_file", "w1", path="coins.py", content=STUB + RAISE))
    options: dict[str, Any] = {"session_id": "s1", "task": TASK, "root": tmp_path}
    options["settings"] = settings
    live = Session(
        provider=LanesProvider([back]), editor=MemoryEditor(), recorder=recorder, **options
    )
    with anyio.fail_after(60):
        await live.run()
    recorder.close()
    assert refused_change(live.rt)

    state = restore_state(read_transcript(tmp_path / "t" / "s1.jsonl"))
    [result] = [m for m in state.history if isinstance(m, ToolMessage)]
    assert result.unchanged and not result.is_error
    restored = Session(
        provider=LanesProvider([]), editor=MemoryEditor(), history=state.history, **options
    )
    assert refused_change(restored.rt)


async def test_ties_keep_the_shortest_and_a_reply_without_edits_counts_the_last_run(
    tmp_path: Path,
) -> None:
    project(tmp_path)
    long_right = RIGHT.replace(
        "    return best[target]\n", "    # the table\n    return best[target]\n"
    )
    provider = LanesProvider(
        [
            edit(RAISE, WRONG, "e1"),
            (
                reply(call("read_file", "r1", path="coins.py")),
                edit(WRONG, long_right, "c2"),
                edit(WRONG, RIGHT, "c3"),
            ),
            reply(DONE),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    with anyio.fail_after(240):
        await session.run()
    tried = next(e for e in editor.events if isinstance(e, CandidatesTried))
    assert (tried.kept, tried.passed) == (3, [1, 3, 3])
    assert kept_edits(session) == ["e1", "c3"]


def test_the_person_reads_which_reply_was_kept_over_lsp_and_acp(tmp_path: Path) -> None:
    why = ["", "", "it was cut off"]
    event = CandidatesTried(step=6, tried=3, kept=2, passed=[1, 4, None], why=why, of=5)
    update = session_update(event, tmp_path)
    assert update is not None
    assert update.wire() == {
        "sessionUpdate": "candidates",
        "step": 6,
        "tried": 3,
        "kept": 2,
        "passed": [1, 4, None],
        "why": why,
        "of": 5,
    }
    thought = UpdateMapper(tmp_path).update(event)
    assert thought is not None
    assert thought.model_dump(by_alias=True)["content"]["text"] == (
        "Tried 3 replies against the tests on copies of the workspace; kept reply 2: "
        "4 of 5 tests pass with it (each reply: 1; 4; not judged: it was cut off)."
    )


def test_choose_prefers_judged_replies_then_passes_then_length() -> None:
    short, long = reply(content="a"), reply(content="a much longer reply")
    assert choose([long, short], [Trial(passed=2), Trial(passed=2)]) == 1
    assert choose([short, long], [Trial(passed=1), Trial(passed=2)]) == 1
    assert choose([short, long], [Trial(passed=None), Trial(passed=0)]) == 1
    assert choose([None, long], [Trial(passed=None), Trial(passed=None)]) == 1
    # A reply without changes ties with a change that passes as many: the change is kept.
    claim = reply(content="done")
    assert choose([claim, long], [Trial(passed=4, changes=False), Trial(passed=4)]) == 1


async def test_no_candidates_without_failed_tests_permission_or_time(tmp_path: Path) -> None:
    project(tmp_path)
    session, _ = make_session(tmp_path, LanesProvider([]))
    rt = session.rt
    candidates = Candidates(rt, None, frozenset())  # type: ignore[arg-type]  # ready() reads no tool
    assert not candidates.ready()  # no test run yet
    rt.written[tmp_path / "coins.py"] = (tmp_path / "coins.py").read_text()
    rt.tests_ran_on = test_feedback.tested_state(rt)
    rt.tests_last = SuiteRun(status="failed", detail="", output="1 failed")
    assert not candidates.ready()  # the person has not allowed the test command
    rt.tests_allowed = PYTEST
    rt.steps = rt.run_start + 1
    assert not candidates.ready()  # the first step: the model's own reply
    rt.steps = rt.run_start + 2
    assert candidates.ready()
    now = [0.0]
    rt.clock = RunClock(budget_s=25.0, now=lambda: now[0])
    now[0] = 10.0
    assert not candidates.ready()  # 15 s left: too little for a trial and the step
    rt.clock = RunClock()
    rt.settings.loop = rt.settings.loop.replace(candidates=1)
    assert not candidates.ready()


async def test_the_time_budget_bounds_the_trials(tmp_path: Path) -> None:
    project(tmp_path)
    hang = "    import time\n    time.sleep(600)\n" + RIGHT
    provider = LanesProvider(
        [edit(RAISE, WRONG, "e1"), (edit(WRONG, hang, "c1"), edit(WRONG, GREEDY, "c2"))]
    )
    session, _ = make_session(tmp_path, provider, candidates=2, time_budget_s=30.0)
    started = time.monotonic()
    with anyio.fail_after(120):
        outcome = await session.run()
    assert outcome.stop_reason == "max_steps"  # the time was spent in the first copy's run
    assert time.monotonic() - started < 70
    assert "sleep" not in (tmp_path / "coins.py").read_text()


def test_the_server_gets_a_slot_per_candidate_and_one_for_completions() -> None:
    command = server_command(
        Path("llama-server"), Path("m.gguf"), port=1, ctx_size=4096, threads=2, agent_slots=3
    )
    assert command[command.index("-np") + 1] == "4"
    assert command[command.index("-c") + 1] == str(3 * 4096)
    assert "--kv-unified" in command
    single = server_command(Path("llama-server"), Path("m.gguf"), port=1, ctx_size=4096, threads=2)
    assert (single[single.index("-np") + 1], single[single.index("-c") + 1]) == ("2", "4096")
    # The provider and the doctor's advice read the slots from one place.
    assert LoopConfig().agent_slots() == 3
    assert LoopConfig(candidates=0).agent_slots() == 1
    five = CadenzaConfig(loop=LoopConfig(candidates=5))
    assert LocalProvider(name="local/m", model="m", config=five).agent_slots == 5


@pytest.fixture(scope="module")
def smollm2() -> Path:
    """SmolLM2-135M in the models folder (pulled once per machine), or a skip without a server."""
    try:
        find_binary()
    except LlamaServerError as exc:
        pytest.skip(str(exc))
    try:
        return pull("smollm2-135m")
    except ModelError as exc:
        pytest.fail(f"cannot pull smollm2-135m: {exc}")


@pytest.mark.e2e
async def test_a_real_server_writes_two_candidates_at_once(smollm2: Path) -> None:
    config = CadenzaConfig(contextSize=1024, loop=LoopConfig(candidates=2))
    provider = LocalProvider(name="local/smollm2-135m", model="smollm2-135m", config=config)
    base = ModelRequest(
        messages=[
            SystemMessage(content="You write short stories."),
            UserMessage(content="Write a story about a cat and a lighthouse."),
        ],
        max_tokens=48,
        temperature=0.8,
        reply_format="text",
    )
    spans: dict[int, tuple[float, float]] = {}

    async def one(lane: int) -> None:
        first: list[float] = []

        def seen(_: str) -> None:
            first.append(time.monotonic())

        request = dataclasses.replace(base, lane=lane, seed=lane + 1)
        await provider.complete(request, on_text=seen)
        spans[lane] = (first[0], time.monotonic())

    try:
        await provider.complete(dataclasses.replace(base, max_tokens=1))  # the server started
        server = provider.server
        assert server is not None
        async with anyio.create_task_group() as group:
            group.start_soon(one, 0)
            group.start_soon(one, 1)
        # Both were written at once: each one's first token came before the other one ended.
        (a_first, a_end), (b_first, b_end) = spans[0], spans[1]
        assert a_first < b_end and b_first < a_end, spans
        async with httpx.AsyncClient() as client:
            props = (await client.get(f"{server.base_url}/props")).json()
        assert props["total_slots"] == 3
    finally:
        await provider.aclose()


def test_fresh_messages_end_with_the_task_and_what_came_with_it() -> None:
    system = SystemMessage(content="s")
    earlier = [UserMessage(content="old task", tag="task"), AssistantMessage(content="ok")]
    task = UserMessage(content="implement it", tag="task")
    files = UserMessage(content="the files", tag="files")
    attempt = AssistantMessage(content="a wrong attempt")
    failures = UserMessage(content="the tests failed", tag="check")
    history = [system, *earlier, task, files, attempt, failures]
    assert fresh_messages(history) == [system, *earlier, task, files]
    # No task, or nothing after it: the conversation as it is.
    assert fresh_messages([system, files, attempt]) == [system, files, attempt]
    assert fresh_messages([system, task, files]) == [system, task, files]
    # A later step samples its fresh lanes with other seeds than the step before.
    assert SEEDS_PER_STEP > 3
