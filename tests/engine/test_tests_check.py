"""The done check ``tests``: the workspace's tests run before a claim of done is accepted."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from cadenza.config import CadenzaConfig, ConfigError, load_config
from cadenza.engine.checks import MAX_REFUSALS
from cadenza.engine.events import (
    CheckRan,
    PermissionDecided,
    ToolCallFinished,
    ToolCallStarted,
    WorkspaceWaited,
)
from cadenza.engine.permissions import PermissionAnswer
from cadenza.engine.project_tests import answered_tests
from cadenza.engine.session import Session, SessionSettings
from cadenza.engine.suite_verdict import TAIL_LINES, judge_output, output_tail
from cadenza.engine.testsuite import SuiteCommand, suite_command
from cadenza.engine.variants import API_LOOP, LOCAL_LOOP, LoopSettings
from cadenza.host.settings import session_settings
from cadenza.messages import ToolMessage, UserMessage
from cadenza.tools.base import ToolResult
from cadenza.tools.host import EditOutcome, FileEdit
from tests.doubles import MemoryEditor, ScriptedProvider, call, reply

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete")
"""The small-model profile speaking tool calls, as these scripted models do."""

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
SCRIPT = f"{sys.executable} -S test_calc.py"
"""The same test without pytest's start-up (seconds on a loaded machine)."""
TASK = "Make double() in calc.py return twice its argument."
WRONG = call(
    "edit_file", path="calc.py", old_string="return x", new_string="return x + 1", _id="wrong"
)
RIGHT = call("edit_file", path="calc.py", old_string="return x", new_string="return 2 * x")
FIX = call("edit_file", path="calc.py", old_string="return x + 1", new_string="return 2 * x")
DONE = call("complete", status="done", summary="double fixed")
CLAIM_ONLY = TOOL_LOOP.replace(test_feedback=False, candidates=0)
"""The local loop with the tests run at the claim only, one reply a step (these tests are about
that check)."""


def project(root: Path) -> None:
    (root / "calc.py").write_text("def double(x):\n    return x\n")
    (root / "test_calc.py").write_text(
        "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6, double(3)\n"
        "\n\nif __name__ == '__main__':\n    test_double()\n    print('1 passed')\n"
    )


def make_session(
    root: Path,
    provider: ScriptedProvider,
    *,
    loop: LoopSettings = CLAIM_ONLY,
    command: str | None = SCRIPT,
    timeout_s: float = 60.0,
    editor: MemoryEditor | None = None,
) -> tuple[Session, MemoryEditor]:
    editor = editor or MemoryEditor()
    settings = SessionSettings(
        loop=loop, max_steps=10, test_command=command, test_timeout_s=timeout_s
    )
    session = Session(
        session_id="s1", task=TASK, root=root, provider=provider, editor=editor, settings=settings
    )  # type: ignore[arg-type]
    return session, editor


def suite_checks(editor: MemoryEditor) -> list[CheckRan]:
    return [e for e in editor.events if isinstance(e, CheckRan) and e.name == "tests"]


def results(session: Session) -> list[str]:
    return [m.content for m in session.messages if isinstance(m, ToolMessage)]


async def test_passing_tests_accept_the_claim(tmp_path: Path) -> None:
    project(tmp_path)
    provider = ScriptedProvider([reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider, command=PYTEST)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.message == "double fixed"
    [check] = suite_checks(editor)
    assert (check.status, check.refused) == ("passed", False)
    assert "1 passed" in check.detail
    [asked] = editor.asked
    assert asked.name == "run_command" and "tests" in asked.title
    assert json.loads(asked.raw_input)["command"] == PYTEST
    started = [e for e in editor.events if isinstance(e, ToolCallStarted)]
    assert started[-1].tool_call_id == asked.tool_call_id == "check-tests"
    finished = [e for e in editor.events if isinstance(e, ToolCallFinished)]
    # The person reads the counts first, then what the command said.
    [shown] = [f.content for f in finished if f.tool_call_id == "check-tests"]
    assert shown.startswith("1 passed\nexit code 0\n")
    assert not (tmp_path / ".pytest_cache").exists()


async def test_passing_tests_the_session_rewrote_are_said_so(tmp_path: Path) -> None:
    project(tmp_path)
    weaker = call(
        "edit_file", path="test_calc.py", old_string="double(3) == 6", new_string="double(3) == 3"
    )
    provider = ScriptedProvider([reply(weaker), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    [check] = suite_checks(editor)
    assert check.status == "passed"
    assert check.detail.endswith("; this session changed the tests themselves: test_calc.py")


async def test_passing_tests_the_session_made_the_runner_say_are_said_so(
    tmp_path: Path,
) -> None:
    # A root pytest.py is what `python -m pytest` imports: the run "passes" with calc.py wrong.
    project(tmp_path)
    fake = call("create_file", path="pytest.py", content="print('1 passed')\n")
    provider = ScriptedProvider([reply(fake), reply(DONE)])
    session, editor = make_session(tmp_path, provider, command=PYTEST)
    await session.run()
    [check] = suite_checks(editor)
    assert check.detail.endswith("; this session changed the tests themselves: pytest.py")


async def test_failing_tests_refuse_then_the_fix_is_accepted(tmp_path: Path) -> None:
    project(tmp_path)
    provider = ScriptedProvider([reply(WRONG), reply(DONE), reply(FIX), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    refusal = results(session)[1]
    assert refusal.startswith("not accepted yet: the task is not done, a check failed:")
    assert "the tests fail" in refusal and "exit code 1" in refusal
    assert "AssertionError: 4" in refusal and "test_calc.py" in refusal
    assert [(c.status, c.refused) for c in suite_checks(editor)] == [
        ("failed", True),
        ("passed", False),
    ]
    # Asked once: the prompt says the command runs again in the session. Each run is its own
    # call, with a unique id.
    assert [a.tool_call_id for a in editor.asked] == ["check-tests"]
    started = [e.tool_call_id for e in editor.events if isinstance(e, ToolCallStarted)]
    assert [i for i in started if i.startswith("check-tests")] == ["check-tests", "check-tests-2"]


async def test_tests_that_keep_failing_end_the_session_failed(tmp_path: Path) -> None:
    project(tmp_path)
    provider = ScriptedProvider([reply(WRONG)] + [reply(DONE)] * (MAX_REFUSALS + 1))
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "failed"
    assert outcome.message.startswith("Not done: the tests fail")
    assert "AssertionError: 4" in outcome.message
    assert [c.refused for c in suite_checks(editor)] == [True, True, False]


async def test_a_denied_run_skips_the_check_and_says_so(tmp_path: Path) -> None:
    project(tmp_path)
    editor = MemoryEditor(permissions=[PermissionAnswer(outcome="selected", option="reject_once")])
    provider = ScriptedProvider([reply(WRONG), reply(DONE)])
    session, _ = make_session(tmp_path, provider, editor=editor)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"  # nothing judged the work: the claim stands
    [check] = suite_checks(editor)
    assert check.status == "skipped" and not check.refused
    assert check.detail == "the tests were not run: the person did not allow running them"
    [decided] = [e for e in editor.events if isinstance(e, PermissionDecided)]
    assert decided.verdict == "rejected"


async def test_a_denial_is_not_asked_again_in_the_session(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "calc.py").write_text("def double(x):\n    return x\n\n\nOLD = 1\n")
    editor = MemoryEditor(permissions=[PermissionAnswer(outcome="cancelled")])
    rename = call("edit_file", path="calc.py", old_string="OLD = 1", new_string="NEW = 1")
    provider = ScriptedProvider([reply(rename), reply(DONE)])
    session, _ = make_session(tmp_path, provider, editor=editor)
    await session.run()
    assert len(editor.asked) == 1
    assert session.rt.tests_declined == "the permission request was dismissed"


async def test_a_hanging_test_command_is_bounded(tmp_path: Path) -> None:
    project(tmp_path)
    provider = ScriptedProvider([reply(RIGHT)] + [reply(DONE)] * (MAX_REFUSALS + 1))
    session, editor = make_session(tmp_path, provider, command="sleep 60", timeout_s=0.5)
    started = time.monotonic()
    outcome = await session.run()
    assert time.monotonic() - started < 30
    assert outcome.stop_reason == "failed"
    assert "did not finish within 0.5 s" in outcome.message
    assert [c.status for c in suite_checks(editor)] == ["failed"] * (MAX_REFUSALS + 1)


async def test_no_tests_no_check_and_no_change_no_run(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def double(x):\n    return x\n")
    provider = ScriptedProvider([reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider, command=None)
    assert (await session.run()).stop_reason == "end_turn"
    assert suite_checks(editor) == [] and editor.asked == []


async def test_claiming_done_again_with_nothing_changed_runs_the_tests(tmp_path: Path) -> None:
    """A stub left untouched: told nothing changed, the model claims done again; the tests
    run then (not at the first claim), fail, and the model reads why (c08 of the checked set
    ended done that way)."""
    project(tmp_path)
    provider = ScriptedProvider([reply(DONE), reply(DONE), reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.message == "double fixed"
    assert [(c.status, c.refused) for c in suite_checks(editor)] == [
        ("failed", True),
        ("passed", False),
    ]
    refusal = results(session)[1]
    assert "nothing was changed in this session and the tests fail" in refusal
    assert "AssertionError: 3" in refusal


async def test_edits_that_keep_failing_still_bring_the_failures(tmp_path: Path) -> None:
    """An edit that never applies, then claims of done: told once that nothing changed, the
    next claim runs the tests too, so the model reads what fails, not only that nothing changed
    (a fresh user's "the tests fail, fix the bug" ended that way, the tests never run)."""
    project(tmp_path)
    stale = call("edit_file", path="calc.py", old_string="return y", new_string="return 2 * y")
    provider = ScriptedProvider(
        [reply(stale), reply(DONE), reply(DONE), reply(DONE), reply(RIGHT), reply(DONE)]
    )
    session, editor = make_session(tmp_path, provider)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert [(c.status, c.refused) for c in suite_checks(editor)] == [
        ("failed", True),
        ("passed", False),
    ]
    assert any("nothing was changed" in r and "AssertionError: 3" in r for r in results(session))


async def test_a_question_is_answered_after_the_tests_were_shown_once(tmp_path: Path) -> None:
    """With nothing changed a failing test was failing before the session: shown once, then a
    third claim (an answer to a question) stands."""
    project(tmp_path)
    provider = ScriptedProvider([reply(DONE), reply(DONE), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    assert (await session.run()).stop_reason == "end_turn"
    assert [c.status for c in suite_checks(editor)] == ["failed"]
    (tmp_path / "calc.py").write_text("def double(x):\n    return 2 * x\n")
    passing = ScriptedProvider([reply(DONE), reply(DONE)])
    session, editor = make_session(tmp_path, passing)
    assert (await session.run()).stop_reason == "end_turn"
    assert [(c.status, c.refused) for c in suite_checks(editor)] == [("passed", False)]


async def test_hosted_final_answers_are_checked(tmp_path: Path) -> None:
    """A hosted model's final answer with a failing test: it reads the failure and fixes it."""
    project(tmp_path)
    provider = ScriptedProvider(
        [reply(WRONG), reply(content="done"), reply(FIX), reply(content="fixed")]
    )
    session, editor = make_session(tmp_path, provider, loop=API_LOOP)
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn" and outcome.message == "fixed"
    [refusal] = [m for m in session.messages if isinstance(m, UserMessage) and m.tag == "check"]
    assert "AssertionError: 4" in refusal.content
    assert [c.status for c in suite_checks(editor)] == ["failed", "passed"]
    assert (tmp_path / "calc.py").read_text() == "def double(x):\n    return 2 * x\n"
    project(tmp_path)
    off = ScriptedProvider([reply(WRONG), reply(content="done")])
    session, editor = make_session(tmp_path, off, loop=API_LOOP.replace(checks="off"))
    assert (await session.run()).stop_reason == "end_turn" and suite_checks(editor) == []


def test_pytest_runs_as_a_module_so_a_flat_project_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/ importing a module at the root: the bare ``pytest`` script fails to import it."""
    import os
    import subprocess

    (tmp_path / "calc.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
    )
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    found = suite_command(tmp_path, None)
    assert found is not None and " -m pytest -q" in found.command
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        found.command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_detection(tmp_path: Path) -> None:
    assert suite_command(tmp_path, None) is None
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    found = suite_command(tmp_path, None)
    assert found is not None and found.source == "pytest" and "pytest -q" in found.command
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    found = suite_command(tmp_path, None)
    assert found is not None and found.command.startswith(".venv/bin/python -m pytest")
    assert suite_command(tmp_path, "") is None  # switched off
    configured = suite_command(tmp_path, " make check ")
    assert configured == SuiteCommand(command="make check", source="cadenza.toml")


def test_detection_of_pytest_config_npm_and_go(tmp_path: Path) -> None:
    for name, text in [
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n"),
        ("setup.cfg", "[tool:pytest]\n"),
        ("tox.ini", "[pytest]\n"),
        ("pytest.toml", ""),  # pytest 9's own file: read even empty
        (".pytest.toml", ""),
        (".pytest.ini", ""),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / name).write_text(text)
        assert (found := suite_command(folder, None)) and found.source == "pytest", name
    npm = tmp_path / "npm"
    npm.mkdir()
    (npm / "package.json").write_text(
        '{"scripts": {"test": "echo \\"Error: no test specified\\""}}'
    )
    assert suite_command(npm, None) is None  # npm init's placeholder
    (npm / "package.json").write_text('{"scripts": {"test": "node --test"}}')
    assert (found := suite_command(npm, None)) and found.command == "npm test --silent"
    (npm / "package.json").write_text("{not json")
    assert suite_command(npm, None) is None
    go = tmp_path / "go"
    go.mkdir()
    (go / "go.mod").write_text("module x\n")
    assert (found := suite_command(go, None)) and found.command == "go test ./..."


def test_judging_the_output() -> None:
    pytest_suite = SuiteCommand(
        command="pytest", source="pytest", no_tests_exit=5, missing="No module named pytest"
    )
    npm = SuiteCommand(command="npm test", source="package.json")
    assert judge_output(npm, ToolResult(content="exit code 0\nok 3"), 9).status == "passed"
    missing = ToolResult(content="exit code 127\nbash: npm: command not found", is_error=True)
    assert judge_output(npm, missing, 9).status == "skipped"
    none = ToolResult(content="exit code 5\nno tests ran", is_error=True)
    assert judge_output(pytest_suite, none, 9).status == "skipped"
    assert judge_output(npm, none, 9).status == "failed"  # 5 means nothing special to npm
    no_module = ToolResult(content="exit code 1\n/usr/bin/python3: No module named pytest")
    assert judge_output(pytest_suite, no_module, 9).status == "skipped"
    killed = ToolResult(content="the command was killed by signal 9 (SIGKILL)\n", is_error=True)
    assert judge_output(npm, killed, 9).status == "failed"


def test_a_run_that_exits_0_without_reporting_tests_does_not_pass() -> None:
    pytest_suite = SuiteCommand(command="pytest", source="pytest", no_tests_exit=5)
    npm = SuiteCommand(command="npm test", source="package.json")
    go = SuiteCommand(command="go test ./...", source="go.mod")
    silent = judge_output(npm, ToolResult(content="exit code 0\n\n  \n"), 9)
    assert silent.status == "skipped"
    assert silent.detail == (
        "the test command `npm test` ran (exit code 0) but printed nothing: it reported no tests"
    )
    skipped_all = judge_output(pytest_suite, ToolResult(content="exit code 0\nsss\n3 skipped"), 9)
    assert skipped_all.status == "skipped"
    assert "reported no test that ran (3 skipped)" in skipped_all.detail
    uncounted = judge_output(pytest_suite, ToolResult(content="exit code 0\nall good"), 9)
    assert (uncounted.status, uncounted.detail) == (
        "skipped",
        "the test command `pytest` ran (exit code 0) but reported no tests (all good)",
    )
    no_files = "exit code 0\n?   \tex/a\t[no test files]\n?   \tex/b\t[no test files]"
    assert judge_output(go, ToolResult(content=no_files), 9).status == "skipped"
    ran = judge_output(go, ToolResult(content=no_files + "\nok  \tex/c\t0.1s"), 9)
    assert ran.status == "passed"
    assert ran.detail == "the test command passed (`go test ./...` exited 0: ok  \tex/c\t0.1s)"
    counted = judge_output(pytest_suite, ToolResult(content="exit code 0\n..\n2 passed in 0.1s"), 9)
    assert (counted.status, counted.detail) == (
        "passed",
        "the tests pass (`pytest`: 2 passed in 0.1s)",
    )


def test_the_tail_is_bounded() -> None:
    output = "\n".join(f"line {n} " + "x" * (400 if n == 199 else 0) for n in range(200))
    tail = output_tail(output).splitlines()
    assert len(tail) == TAIL_LINES and tail[0] == "line 160 "
    assert tail[-1].endswith("…") and len(tail[-1]) < 260


def test_checks_config_from_the_workspace_and_the_init_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trusted workspace may name its test command (it runs only through the permission
    gate); an untrusted one's is ignored, with a note, and its test timeout still applies."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "cadenza.toml").write_text('[checks]\ntest = "make test"\ntestTimeoutS = 9\n')
    warnings: list[str] = []
    untrusted = load_config(tmp_path, warnings)
    assert (untrusted.checks.test, untrusted.checks.test_timeout_s) == (None, 9.0)
    assert len(warnings) == 1 and "checks.test" in warnings[0]
    warnings.clear()
    config = load_config(tmp_path, warnings, trusted=True)
    assert warnings == [] and config.checks.test == "make test"
    merged = config.merged({"checks": {"testTimeoutS": 30}}, "init")  # key by key
    settings = session_settings(merged, "local/x")
    assert (settings.test_command, settings.test_timeout_s) == ("make test", 30.0)
    assert session_settings(CadenzaConfig(), "local/x").test_command is None  # detect
    with pytest.raises(ConfigError):
        CadenzaConfig().merged({"checks": {"testTimeoutS": 0}}, "init")
    with pytest.raises(ConfigError):
        CadenzaConfig().merged({"checks": {"command": "x"}}, "init")


async def test_the_test_run_never_runs_inside_another_sessions_command(tmp_path: Path) -> None:
    from tests.engine.test_command_watch import RecordingWatch

    project(tmp_path)
    busy = "the workspace stayed busy for 900 s: session x (process 7) is running `make`"
    watch = RecordingWatch(holder="session x (process 7) is running `make`")
    provider = ScriptedProvider([reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    session.rt.command_watch = watch
    outcome = await session.run()
    assert outcome.stop_reason == "end_turn"
    assert watch.calls == ["editing", "edited", "editing", "edited"]  # the edit, the tests
    waits = [e.tool_call_id for e in editor.events if isinstance(e, WorkspaceWaited)]
    assert waits[-1] == "check-tests"
    [check] = suite_checks(editor)
    assert check.status == "passed"

    project(tmp_path)
    watch = RecordingWatch()
    provider = ScriptedProvider([reply(RIGHT), reply(DONE)])
    session, editor = make_session(tmp_path, provider)
    session.rt.command_watch = watch
    edit = session.rt.editor.apply_edit

    async def apply_then_busy(change: FileEdit) -> EditOutcome:
        watch.busy = busy  # the workspace is busy from the edit on
        return await edit(change)

    editor.apply_edit = apply_then_busy  # type: ignore[method-assign]
    await session.run()
    [check] = suite_checks(editor)
    assert check.status == "skipped"
    assert check.detail == f"the tests were not run: {busy}"
    assert "1 passed" not in check.detail


def _test_run(call_id: str, title: str, command: str) -> ToolCallStarted:
    arguments = json.dumps({"command": command, "timeout_s": 120})
    return ToolCallStarted(
        tool_call_id=call_id,
        name="run_command",
        title=f"{title}: running `{command}`",
        tool_kind="execute",
        raw_input=arguments,
    )


def test_the_answers_about_the_test_runs_come_back_from_the_events() -> None:
    allowed = [
        _test_run("check-tests", "Checking the tests", "pytest -q"),
        PermissionDecided(
            tool_call_id="check-tests", name="run_command", verdict="allowed", option="allow_once"
        ),
        # The model's own command, refused: no answer about the tests.
        _test_run("c1", "running", "pytest -q"),
        PermissionDecided(tool_call_id="c1", name="run_command", verdict="rejected"),
    ]
    assert answered_tests(allowed) == ("pytest -q", "")
    dismissed = [
        _test_run("change-tests", "Running the tests after the change", "npm test"),
        PermissionDecided(tool_call_id="change-tests", name="run_command", verdict="cancelled"),
    ]
    assert answered_tests(dismissed) == ("", "the permission request was dismissed")
    assert answered_tests([]) == ("", "")
