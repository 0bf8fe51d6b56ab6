"""The code under test cannot forge the tests' verdict, and tests that gave no result never
pass for tests that pass: real pytest runs (the command Cadenza detects) on temporary
workspaces whose own modules lie about the run."""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from cadenza.engine.checks import MAX_REFUSALS
from cadenza.engine.events import CheckRan, ToolCallStarted
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.variants import LOCAL_LOOP, LoopSettings
from cadenza.messages import ToolMessage, UserMessage
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete", candidates=0)
CLAIM_ONLY = TOOL_LOOP.replace(test_feedback=False)
TASK = "Make double() in calc.py return twice its argument."
TESTS = "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
WRONG = call(
    "edit_file", path="calc.py", old_string="return x", new_string="return x + 1", _id="wrong"
)
RIGHT = call("edit_file", path="calc.py", old_string="return x", new_string="return 2 * x")
DONE = call("complete", status="done", summary="double fixed")

FORGE_AT_EXIT = """\
import atexit
import os
import sys


def _forge():
    sys.stdout.write("...\\n3 passed in 0.01s\\n")
    sys.stdout.flush()
    os._exit(0)


atexit.register(_forge)
"""
"""An atexit hook: runs after pytest wrote its report, prints a pass and exits 0."""
PASS_AT_IMPORT = "import os\nprint('1 passed in 0.01s', flush=True)\nos._exit(0)\n"
"""Ends the run at collection, before pytest wrote its report, saying it passed."""
NONE_AT_IMPORT = "import os\nprint('no tests ran in 0.01s', flush=True)\nos._exit(5)\n"
"""Ends the run at collection with pytest's status for "no tests collected"."""


@pytest.fixture(autouse=True)
def detected_pytest(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """The detected command runs this interpreter's pytest (the ``pytest`` found on PATH), with
    its report folders in a temporary folder of this test's own."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    reports = tmp_path_factory.mktemp("reports")
    monkeypatch.setattr(tempfile, "tempdir", str(reports))
    yield
    assert list(reports.iterdir()) == []  # each run's report folder is removed


def project(root: Path, calc: str = "") -> None:
    (root / "calc.py").write_text(f"{calc}\n\ndef double(x):\n    return x\n")
    (root / "test_calc.py").write_text(TESTS)


def make_session(
    root: Path, provider: ScriptedProvider, loop: LoopSettings = CLAIM_ONLY
) -> tuple[Session, MemoryEditor]:
    editor = MemoryEditor()
    settings = SessionSettings(loop=loop, max_steps=10, test_command=None, test_timeout_s=60)
    session = Session(
        session_id="s1", task=TASK, root=root, provider=provider, editor=editor, settings=settings
    )  # type: ignore[arg-type]
    return session, editor


def suite_checks(editor: MemoryEditor) -> list[CheckRan]:
    return [e for e in editor.events if isinstance(e, CheckRan) and e.name == "tests"]


def results(session: Session) -> list[str]:
    return [m.content for m in session.messages if isinstance(m, ToolMessage)]


def fake_bin(folder: Path, python: str) -> Path:
    """A ``pytest`` on PATH whose interpreter is the shell script ``python``."""
    folder.mkdir()
    interpreter = folder / "python3"
    interpreter.write_text(f"#!/bin/sh\n{python}")
    (folder / "pytest").write_text(f"#!{interpreter}\n")
    for path in (interpreter, folder / "pytest"):
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


async def test_an_atexit_hook_that_prints_a_pass_does_not_pass(tmp_path: Path) -> None:
    project(tmp_path, FORGE_AT_EXIT)
    provider = ScriptedProvider([reply(WRONG)] + [reply(DONE)] * (MAX_REFUSALS + 1))
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "failed"
    assert outcome.message.startswith("Not done: the output and pytest's report disagree")
    assert "the report counts 1 failed" in outcome.message
    assert "3 passed in 0.01s" in outcome.message  # the output the person can compare
    assert [c.status for c in suite_checks(editor)] == ["failed"] * (MAX_REFUSALS + 1)
    # The person is asked about the test command; the run shows the report option too.
    [asked] = editor.asked
    command = json.loads(asked.raw_input)["command"]
    assert command.endswith(" -m pytest -q --tb=short -p no:cacheprovider")
    [run] = [
        e
        for e in editor.events
        if isinstance(e, ToolCallStarted) and e.tool_call_id == asked.tool_call_id
    ]
    assert json.loads(run.raw_input)["command"].startswith(f"{command} --junitxml=")


@pytest.mark.parametrize(
    ("calc", "status"),
    [(PASS_AT_IMPORT, "exit code 0"), (NONE_AT_IMPORT, "exit code 5")],
    ids=["a pass", "no tests"],
)
async def test_a_run_ended_before_pytest_wrote_its_report_fails(
    tmp_path: Path, calc: str, status: str
) -> None:
    project(tmp_path, calc)
    provider = ScriptedProvider([reply(WRONG), reply(DONE), reply(DONE), reply(DONE)])
    session, _ = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "failed"
    assert outcome.message.startswith(
        "Not done: the test run ended before pytest wrote its report: code that ends the "
        "process itself (such as os._exit) does that"
    )
    assert f", {status})" in outcome.message
    refusal = results(session)[1]
    assert "the test run ended before pytest wrote its report" in refusal
    assert "Read the failures and fix what makes them fail" in refusal


async def test_a_run_that_found_no_test_never_passes_for_tested(tmp_path: Path) -> None:
    """pytest's own "no tests collected" (exit 5, with its report): the model is told once
    that the tests gave no result; the claim it makes again stands, and says so."""
    (tmp_path / "calc.py").write_text("def double(x):\n    return x\n")
    (tmp_path / "conftest.py").write_text("")
    provider = ScriptedProvider([reply(RIGHT), reply(DONE), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    first, second = suite_checks(editor)
    assert (first.status, first.refused) == ("skipped", True)
    assert (second.status, second.refused) == ("skipped", False)
    assert first.detail.endswith("found no test to run")
    refusal = results(session)[1]
    assert "found no test to run" in refusal
    assert "So nothing shows that the task is done" in refusal
    assert outcome.message.startswith("double fixed\n\nNot confirmed by the tests: `")
    assert outcome.message.endswith("found no test to run.")
    assert results(session)[-1].startswith("complete(done) accepted. Not confirmed by the tests")
    assert [a.tool_call_id for a in editor.asked] == ["check-tests"]  # allowed once


@pytest.mark.parametrize(
    ("python", "said"),
    [
        ('echo "$0: command not found" >&2\nexit 127\n', "command not found"),
        ('echo "$0: No module named pytest" >&2\nexit 1\n', "No module named pytest"),
    ],
    ids=["exit 127", "pytest missing"],
)
async def test_a_test_command_that_could_not_run_never_passes_for_tested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: str, said: str
) -> None:
    folder = fake_bin(tmp_path / "bin", python)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    workspace = tmp_path / "work"
    workspace.mkdir()
    project(workspace)
    provider = ScriptedProvider([reply(RIGHT), reply(DONE), reply(DONE)])
    session, editor = make_session(workspace, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert [(c.status, c.refused) for c in suite_checks(editor)] == [
        ("skipped", True),
        ("skipped", False),
    ]
    refusal = results(session)[1]
    assert "could not run" in refusal and said in refusal
    assert "So nothing shows that the task is done" in refusal
    assert "Not confirmed by the tests: the test command `" in outcome.message
    assert said in outcome.message


def checks_read(session: Session) -> list[str]:
    """What the model read from the checks (the tests after a change, refusals aside)."""
    return [m.content for m in session.messages if isinstance(m, UserMessage) and m.tag == "check"]


async def test_after_a_change_a_forged_pass_is_read_as_the_report_says(tmp_path: Path) -> None:
    project(tmp_path, FORGE_AT_EXIT)
    provider = ScriptedProvider([reply(WRONG)] + [reply(DONE)] * (MAX_REFUSALS + 1))
    session, _ = make_session(tmp_path, provider, loop=TOOL_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "failed"  # not ended as done on "all 3 tests pass"
    [note] = checks_read(session)
    assert note.startswith(
        "The tests ran after your change, but the output and pytest's report disagree "
        "(the report counts 1 failed)"
    )
    assert "tests pass" not in note
    assert session.rt.tests_verdict == "1 failed"


async def test_after_a_change_no_test_found_is_no_result_said_once(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def double(x):\n    return x\n")
    (tmp_path / "conftest.py").write_text("")
    again = call("edit_file", path="calc.py", old_string="2 * x", new_string="x * 2")
    provider = ScriptedProvider([reply(RIGHT), reply(again), reply(DONE), reply(DONE)])
    session, editor = make_session(tmp_path, provider, loop=TOOL_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    [note] = checks_read(session)  # after the first change; the second's is the same reason
    assert note.startswith("The tests gave no result after your change: `")
    assert "found no test to run" in note and "tests pass" not in note
    # The claims take that run (nothing changed since): told once, then it stands, said so.
    assert [(c.status, c.refused) for c in suite_checks(editor)] == [
        ("skipped", True),
        ("skipped", False),
    ]
    assert "Not confirmed by the tests" in outcome.message


def test_a_person_s_own_test_command_is_run_as_written(tmp_path: Path) -> None:
    from cadenza.engine.testsuite import suite_command

    project(tmp_path)
    own = suite_command(tmp_path, f"{sys.executable} -m pytest -q")
    assert own is not None and not own.junit
    detected = suite_command(tmp_path, None)
    assert detected is not None and detected.junit
