"""The hosted models' done checks (``checks = "acted"``): only for what the turn did."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.events import CheckRan
from cadenza.engine.variants import API_LOOP
from cadenza.messages import UserMessage
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply
from tests.engine.test_tests_check import FIX, RIGHT, WRONG, make_session, project


def checks(editor: MemoryEditor) -> list[tuple[str, str, bool]]:
    return [(e.name, e.status, e.refused) for e in editor.events if isinstance(e, CheckRan)]


def refusals(messages: list[object]) -> list[str]:
    return [m.content for m in messages if isinstance(m, UserMessage) and m.tag == "check"]


async def test_a_question_is_answered_at_no_extra_request(tmp_path: Path) -> None:
    """A read and an answer in a workspace whose tests fail: accepted as it is, nothing runs."""
    project(tmp_path)
    provider = ScriptedProvider(
        [reply(call("read_file", path="calc.py")), reply(content="It returns x.")]
    )
    session, editor = make_session(tmp_path, provider, loop=API_LOOP)
    outcome = await session.run()
    assert (outcome.stop_reason, outcome.message) == ("end_turn", "It returns x.")
    assert len(provider.requests) == 2 and checks(editor) == []
    assert refusals(session.messages) == []


async def test_a_claim_without_trying_anything_is_not_questioned(tmp_path: Path) -> None:
    """The other side of it: a hosted model that says done without an edit is believed."""
    project(tmp_path)
    provider = ScriptedProvider([reply(content="done")])
    session, editor = make_session(tmp_path, provider, loop=API_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and len(provider.requests) == 1
    assert checks(editor) == []
    assert (tmp_path / "calc.py").read_text() == "def double(x):\n    return x\n"


async def test_edits_that_all_failed_must_be_made(tmp_path: Path) -> None:
    project(tmp_path)
    bad = call("edit_file", path="calc.py", old_string="return y", new_string="return 2 * x")
    provider = ScriptedProvider(
        [reply(bad), reply(content="done"), reply(RIGHT), reply(content="ok")]
    )
    session, editor = make_session(tmp_path, provider, loop=API_LOOP)
    outcome = await session.run()
    assert (outcome.stop_reason, outcome.message) == ("end_turn", "ok")
    [refusal] = refusals(session.messages)
    assert "each of your 1 edit call(s) failed" in refusal
    assert checks(editor) == [
        ("changed", "failed", True),
        ("changed", "passed", False),
        ("tests", "passed", False),
    ]


async def test_a_follow_up_that_only_talks_is_not_checked_again(tmp_path: Path) -> None:
    """The first turn's change is checked (its tests fail, then pass); the question after it
    is answered at one request, with no check and no test run."""
    project(tmp_path)
    provider = ScriptedProvider(
        [reply(WRONG), reply(content="done"), reply(FIX), reply(content="fixed")]
    )
    session, editor = make_session(tmp_path, provider, loop=API_LOOP)
    assert (await session.run()).message == "fixed"
    before = (len(provider.requests), len(checks(editor)))
    assert [c for c in checks(editor) if c[0] == "tests"] == [
        ("tests", "failed", True),
        ("tests", "passed", False),
    ]
    provider.script.append(reply(content="It doubles its argument."))
    outcome = await session.resume("What does double do now?")
    assert (outcome.stop_reason, outcome.message) == ("end_turn", "It doubles its argument.")
    assert (len(provider.requests), len(checks(editor))) == (before[0] + 1, before[1])


async def test_a_command_in_the_turn_runs_the_tests(tmp_path: Path) -> None:
    """No edit call, but a command ran (it may have changed files): the tests judge the claim;
    no ``changed`` check (nothing was tried)."""
    project(tmp_path)
    command = call("run_command", command="sed -i 's/return x/return 2 * x/' calc.py")
    provider = ScriptedProvider([reply(command), reply(content="done")])
    session, editor = make_session(tmp_path, provider, loop=API_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and len(provider.requests) == 2
    assert checks(editor) == [("tests", "passed", False)]
