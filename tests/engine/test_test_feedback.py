"""The tests as the judge during the work: real pytest runs in a temporary workspace after each
change, their failures first and short."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio

from cadenza.engine.budget import RunClock
from cadenza.engine.events import CheckRan, ToolCallStarted
from cadenza.engine.permissions import PermissionAnswer
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.test_feedback import (
    MIN_LEFT_S,
    feedback_after_change,
    last_run_still_holds,
)
from cadenza.engine.test_report import MAX_CHARS, digest, read_report
from cadenza.engine.testsuite import PYTEST_ARGS, SuiteRun
from cadenza.engine.variants import LOCAL_LOOP
from cadenza.messages import ToolMessage, UserMessage
from cadenza.permission_rules import RuleSet
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete", candidates=0)
"""The small-model profile speaking tool calls, as these scripted models do."""

PYTEST = f"{sys.executable} -m pytest {PYTEST_ARGS}"
"""The detected command's options, with this interpreter (which has pytest)."""
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
WRONG = "    return target // 2\n"
RIGHT = """\
    best = [0] + [target + 1] * target
    for value in range(1, target + 1):
        for coin in coins:
            if coin <= value:
                best[value] = min(best[value], best[value - coin] + 1)
    return best[target]
"""
DONE = call("complete", status="done", summary="implemented")


def project(root: Path) -> None:
    (root / "coins.py").write_text(STUB + "    raise NotImplementedError\n")
    (root / "test_coins.py").write_text(TESTS)


def edit(old: str, new: str, call_id: str) -> object:
    return call("edit_file", call_id, path="coins.py", old_string=old, new_string=new)


def make_session(
    root: Path, provider: ScriptedProvider, editor: MemoryEditor | None = None, **settings: object
) -> tuple[Session, MemoryEditor]:
    editor = editor or MemoryEditor()
    options: dict[str, object] = {"loop": TOOL_LOOP, "max_steps": 10, "test_command": PYTEST}
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


def notes(session: Session) -> list[str]:
    return [m.content for m in session.messages if isinstance(m, UserMessage) and m.tag == "check"]


async def test_the_tests_judge_each_change_failures_first(tmp_path: Path) -> None:
    project(tmp_path)
    raise_line = "    raise NotImplementedError\n"
    provider = ScriptedProvider(
        [
            reply(edit(raise_line, WRONG, "e1")),  # type: ignore[arg-type]
            reply(edit(WRONG, RIGHT, "e2")),  # type: ignore[arg-type]
            reply(DONE),
        ]
    )
    session, editor = make_session(tmp_path, provider)
    with anyio.fail_after(120):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    failing, passing = notes(session)
    lines = failing.splitlines()
    # The verdict, then each failing test's name and its assertion, before anything else.
    assert lines[0] == "The tests ran after your change: 2 failed, 1 passed. The failures:"
    assert lines[1:4] == [
        "FAILED test_coins.py::test_one_coin",
        "  test_coins.py:5: assert fewest_coins([1, 5, 10], 10) == 1",
        "  assert 5 == 1",
    ]
    assert "FAILED test_coins.py::test_three_coins" in failing
    assert "test_nothing" not in failing
    assert "Traceback" not in failing and len(failing) < MAX_CHARS + 200
    assert passing == (
        "The tests ran after your change: all 3 tests pass. If the task is done, call "
        'complete with status "done" and a one-sentence summary.'
    )
    # The model reads each verdict right after the step's tool results.
    second_edit = next(
        i
        for i, m in enumerate(session.messages)
        if isinstance(m, ToolMessage) and m.tool_call_id == "e2"
    )
    assert session.messages[second_edit + 1] == UserMessage(tag="check", content=passing)
    # Asked once, for the session: the second run and the done check's did not ask again.
    [asked] = editor.asked
    assert asked.title.startswith("Run the project's tests after each change: ")
    titles = [
        e.title for e in editor.events if isinstance(e, ToolCallStarted) and "tests" in e.title
    ]
    assert [t.split(":")[0] for t in titles] == ["Running the tests after the change"] * 2
    # The claim's check took the run after the last change: nothing changed since.
    [check] = [e for e in editor.events if isinstance(e, CheckRan) and e.name == "tests"]
    assert check.status == "passed"
    assert check.detail.endswith("(the run after the last change: nothing changed since)")
    # The green run after a reply of edits only was the claim: the model was not asked again.
    assert len(provider.requests) == 2 and provider.script == [reply(DONE)]
    assert outcome.message == "The tests pass: 3 passed."


async def test_a_green_run_ends_the_turn_only_after_a_reply_of_edits_only(
    tmp_path: Path,
) -> None:
    project(tmp_path)
    raise_line = "    raise NotImplementedError\n"
    both = reply(edit(raise_line, RIGHT, "e1"), call("read_file", "r1", path="coins.py"))  # type: ignore[arg-type]
    provider = ScriptedProvider([both, reply(DONE)])
    session, _ = make_session(tmp_path, provider)
    with anyio.fail_after(120):
        outcome = await session.run()
    # The reply also asked to read a file: it reads the result, and claims done itself.
    assert len(provider.requests) == 2 and outcome.stop_reason == "end_turn"
    assert "all 3 tests pass" in notes(session)[0]


async def test_no_run_without_a_change_or_without_permission(tmp_path: Path) -> None:
    project(tmp_path)
    reading = reply(call("read_file", "r1", path="coins.py"))
    wrong = reply(edit("    raise NotImplementedError\n", WRONG, "e1"))  # type: ignore[arg-type]
    provider = ScriptedProvider([reading, wrong, reply(DONE)])
    declined = MemoryEditor(
        permissions=[PermissionAnswer(outcome="selected", option="reject_once")]
    )
    session, editor = make_session(tmp_path, provider, editor=declined)
    with anyio.fail_after(60):
        outcome = await session.run()
    assert notes(session) == []  # the read changed nothing; the run after the edit was refused
    [asked] = editor.asked  # the done check did not ask again
    assert "after each change" in asked.title
    assert outcome.stop_reason == "end_turn"  # nothing judged the claim: it stands, as before


async def test_allowed_tests_run_before_the_first_reply_and_it_reads_the_failures(
    tmp_path: Path,
) -> None:
    project(tmp_path)
    (tmp_path / "coins.py").write_text(STUB + WRONG)  # a bug to fix, not a stub
    provider = ScriptedProvider([reply(edit(WRONG, RIGHT, "e1"))])  # type: ignore[arg-type]
    session, editor = make_session(tmp_path, provider)
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    with anyio.fail_after(120):
        outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and editor.asked == []  # the rule let them run
    # The first request already held the failures, right after the task.
    first = provider.requests[0].messages
    [note] = [m for m in first if isinstance(m, UserMessage) and m.tag == "check"]
    assert note.content.startswith(
        "Before any change, the project's tests ran on the files as they are: "
        "2 failed, 1 passed. The failures:\nFAILED test_coins.py::test_one_coin"
    )
    titles = [
        e.title.split(":")[0]
        for e in editor.events
        if isinstance(e, ToolCallStarted) and "tests" in e.title
    ]
    assert titles == ["Running the tests before any change", "Running the tests after the change"]


async def test_no_run_at_the_start_unless_the_tests_may_run_unasked(tmp_path: Path) -> None:
    project(tmp_path)
    provider = ScriptedProvider([reply(edit("    raise NotImplementedError\n", RIGHT, "e1"))])  # type: ignore[arg-type]
    session, editor = make_session(tmp_path, provider)
    with anyio.fail_after(120):
        await session.run()
    # Asked only after the change: nothing runs, and nobody is asked, before the model spoke.
    [asked] = editor.asked
    assert "after each change" in asked.title
    first = provider.requests[0].messages
    assert all(m.tag != "check" for m in first if isinstance(m, UserMessage))


async def test_code_not_written_yet_says_nothing_at_the_start(tmp_path: Path) -> None:
    project(tmp_path)  # a stub raising NotImplementedError: its failures say nothing new
    provider = ScriptedProvider([reply(edit("    raise NotImplementedError\n", RIGHT, "e1"))])  # type: ignore[arg-type]
    session, _ = make_session(tmp_path, provider)
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    with anyio.fail_after(120):
        outcome = await session.run()
    first = provider.requests[0].messages
    assert all(m.tag != "check" for m in first if isinstance(m, UserMessage))
    assert outcome.stop_reason == "end_turn"


async def test_passing_tests_at_the_start_say_nothing(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "coins.py").write_text(STUB + RIGHT)
    provider = ScriptedProvider([reply(DONE)])
    session, _ = make_session(tmp_path, provider)
    session.rt.permissions.rules = RuleSet.parse(allow=[f"run_command:{sys.executable} *"])
    with anyio.fail_after(120):
        await session.run()
    first = provider.requests[0].messages
    assert all(m.tag != "check" for m in first if isinstance(m, UserMessage))
    assert session.rt.tests_last is not None and session.rt.tests_last.status == "passed"


async def test_the_same_files_are_not_tested_twice_nor_past_the_budget(tmp_path: Path) -> None:
    project(tmp_path)
    session, _ = make_session(tmp_path, ScriptedProvider([]))
    rt = session.rt
    ctx = session.rt.tools  # unused by the skip paths
    rt.written[tmp_path / "coins.py"] = (tmp_path / "coins.py").read_text()
    rt.tests_ran_on = (("coins.py", rt.written[tmp_path / "coins.py"]),)
    assert await feedback_after_change(rt, ctx) is None  # type: ignore[arg-type]
    # That run stands for the done check while the files are as it found them.
    rt.tests_last = SuiteRun(status="passed", detail="the tests pass")
    assert last_run_still_holds(rt) is rt.tests_last
    rt.written[tmp_path / "coins.py"] += "# changed\n"
    assert last_run_still_holds(rt) is None
    rt.tests_ran_on = None
    now = [0.0]
    rt.clock = RunClock(budget_s=MIN_LEFT_S + 5, now=lambda: now[0])
    now[0] = 6.0
    assert await feedback_after_change(rt, ctx) is None  # type: ignore[arg-type]
    assert not rt.tests_allowed  # nothing was asked


async def test_a_run_that_does_not_finish_is_stopped_and_said_so(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "test_slow.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"
    )
    provider = ScriptedProvider(
        [reply(edit("    raise NotImplementedError\n", RIGHT, "e1")), reply(DONE)]  # type: ignore[arg-type]
    )
    session, _ = make_session(
        tmp_path, provider, test_timeout_s=3.0, loop=TOOL_LOOP.replace(checks="off")
    )
    with anyio.fail_after(60):
        await session.run()
    [note] = notes(session)
    assert note.startswith("The tests ran after your change and did not finish in time")


def pytest_output(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *PYTEST_ARGS.split()],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout + done.stderr


def test_the_digest_of_real_runs(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(
        "def half(x):\n    return x / 3\n\n\ndef fail(x):\n    raise ValueError(f'bad {x}')\n"
    )
    cases = "".join(
        f"\n\ndef test_half_{i}():\n    assert half({2 * i}) == {i}\n" for i in range(1, 30)
    )
    (tmp_path / "test_calc.py").write_text(
        "from calc import fail, half\n" + cases + "\n\ndef test_raises():\n    assert fail(1)\n"
    )
    output = pytest_output(tmp_path)
    report = read_report(output)
    assert report.counts == {"failed": 30}
    text = digest(output)
    lines = text.splitlines()
    assert lines[:3] == [
        "FAILED test_calc.py::test_half_1",
        "  test_calc.py:5: assert half(2) == 1",
        "  assert 0.6666666666666666 == 1",
    ]
    assert len(text) <= MAX_CHARS and lines[-1].startswith("… and ")
    shown = sum(line.startswith("FAILED ") for line in lines)
    assert lines[-1].startswith(f"… and {30 - shown} more: test_calc.py::test_half_{shown + 1},")
    # Strings compared: the values, not difflib's marker lines under them.
    (tmp_path / "test_calc.py").write_text(
        "def test_words():\n    assert 'hello,-world!' == 'hello-world'\n"
    )
    text = digest(pytest_output(tmp_path))
    assert "assert 'hello,-world!' == 'hello-world'" in text
    assert not any(line.lstrip().startswith("?") for line in text.splitlines())
    # A module that does not load: the file, the line that imports it, the error.
    (tmp_path / "test_calc.py").write_text("from calc import half\n\n\ndef test_x():\n    pass\n")
    (tmp_path / "calc.py").write_text("def half(x:\n")
    text = digest(pytest_output(tmp_path))
    assert text.splitlines()[0] == "ERROR test_calc.py"
    assert "SyntaxError" in text and "site-packages" not in text
