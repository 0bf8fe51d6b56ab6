"""pytest's report beside the output: read safely, and the verdict when they disagree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cadenza.engine import junit
from cadenza.engine.events import PermissionDecided, ToolCallStarted
from cadenza.engine.junit import NO_REPORT, Junit, ReportFile, base_command, read_junit
from cadenza.engine.project_tests import answered_tests
from cadenza.engine.suite_verdict import judge_output
from cadenza.engine.test_report import read_report
from cadenza.engine.testsuite import SuiteCommand
from cadenza.tools.base import ToolResult

MIXED = """\
import pytest


def test_passes():
    pass


def test_fails():
    assert 0


@pytest.mark.xfail
def test_xfails():
    assert 0


@pytest.mark.xfail
def test_xpasses():
    pass


@pytest.fixture
def breaks():
    yield
    raise RuntimeError


def test_fails_and_errs(breaks):
    assert 0
"""
PYTEST = SuiteCommand(
    command="python -m pytest",
    source="pytest",
    no_tests_exit=5,
    missing="No module named pytest",
    junit=True,
)
UNREADABLE = "pytest's report could not be read"


def test_the_report_counts_as_pytest_does(tmp_path: Path) -> None:
    (tmp_path / "test_mixed.py").write_text(MIXED)
    report = tmp_path / "report.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
    )
    said = read_report(done.stdout).counts
    assert said == {"failed": 2, "passed": 1, "xfailed": 1, "xpassed": 1, "error": 1}
    counted = read_junit(report)
    assert counted == Junit(passed=2, failed=2, errors=1, skipped=1)  # xpassed pass, xfailed skip
    assert isinstance(counted, Junit) and not counted.passes and counted.ran == 5
    assert counted.summary == "2 failed, 2 passed, 1 skipped, 1 error"


SKIPS_WHEN_WRONG = """\
import pytest


def double(x):
    if x != 2:
        pytest.skip("not today")  # the code under test hides its wrong answers
    return 2 * x
"""
SKIPPING_TESTS = """\
import pytest

from calc import double
from helpers import needs_net


def test_two():
    assert double(2) == 4


def test_three():
    assert double(3) == 6


@pytest.mark.skip(reason="later")
def test_marked():
    pass


def test_online():
    needs_net()
"""


def _pytest_report(folder: Path) -> Junit | str:
    """pytest run for real in ``folder``, its junit report as read."""
    report = folder / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"],
        cwd=folder,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(folder)},
        capture_output=True,
        check=False,
    )
    return read_junit(report)


def test_a_skip_raised_by_the_code_under_test_does_not_pass(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(SKIPS_WHEN_WRONG)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_calc.py").write_text(SKIPPING_TESTS)
    (tests / "helpers.py").write_text(
        "import pytest\n\n\ndef needs_net():\n    pytest.skip('offline')\n"
    )
    counted = _pytest_report(tmp_path)
    assert isinstance(counted, Junit) and counted.passed == 1 and counted.skipped == 3
    assert counted.skipped_in_code.endswith("calc.py:6")  # not the marker, not the helper
    status, detail = judged("exit code 0\n1 passed, 3 skipped in 0.1s", counted, error=False)
    assert status == "failed"
    assert "a test was skipped from " in detail and "code that is not a test" in detail
    # Skips from the tests themselves (a marker, a helper in the tests folder) are theirs.
    (tmp_path / "calc.py").write_text("def double(x):\n    return 2 * x\n")
    counted = _pytest_report(tmp_path)
    assert isinstance(counted, Junit) and counted.passed == 2 and not counted.skipped_in_code
    assert judged("exit code 0\n2 passed, 2 skipped in 0.1s", counted, error=False)[0] == "passed"


def test_a_report_is_read_as_hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "report.xml"
    assert read_junit(path) == NO_REPORT
    laughs = "".join(f'<!ENTITY l{n} "{f"&l{n - 1};" * 10}">' for n in range(1, 10))
    bomb = f'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY l0 "lol">{laughs}]>'
    path.write_text(f'{bomb}<testsuite tests="1"><testcase name="&l9;"/></testsuite>')
    started = time.monotonic()
    assert read_junit(path) == UNREADABLE  # refused at its document type, not expanded
    assert time.monotonic() - started < 1
    outside = tmp_path / "secret"
    outside.write_text("x")
    path.write_text(
        f'<!DOCTYPE t [<!ENTITY x SYSTEM "file://{outside}">]><testsuite><testcase/>&x;</testsuite>'
    )
    assert read_junit(path) == UNREADABLE
    for text in ("<testsuite><testcase>", "<html/>", "not xml"):
        path.write_text(text)
        assert read_junit(path) == UNREADABLE, text
    path.write_text('<testsuites><testsuite><testcase name="a"/></testsuite></testsuites>')
    assert read_junit(path) == Junit(passed=1)
    link = tmp_path / "link.xml"
    link.symlink_to(path)
    assert read_junit(link) == UNREADABLE
    fifo = tmp_path / "fifo.xml"
    os.mkfifo(fifo)
    assert read_junit(fifo) == UNREADABLE  # not waited on
    monkeypatch.setattr(junit, "MAX_REPORT_BYTES", 10)
    assert read_junit(path) == f"{UNREADABLE}: it is larger than 0 MB"


def test_the_report_option_is_added_and_taken_off_again(tmp_path: Path) -> None:
    report = ReportFile()
    try:
        command = report.command("python -m pytest -q")
        assert command.startswith("python -m pytest -q --junitxml=")
        assert report.folder.stat().st_mode & 0o077 == 0  # the person's alone
        assert base_command(command) == "python -m pytest -q"
    finally:
        report.close()
    assert not report.folder.exists()
    spaced = f"'--junitxml={tmp_path}/a b/{junit.PREFIX}x1/report.xml'"
    assert base_command(f"python -m pytest {spaced}") == "python -m pytest"
    assert base_command("make test --junitxml=out.xml") == "make test --junitxml=out.xml"
    arguments = json.dumps({"command": f"pytest -q --junitxml=/tmp/{junit.PREFIX}ab/report.xml"})
    events = [
        ToolCallStarted(
            tool_call_id="check-tests",
            name="run_command",
            title="Checking the tests: running `pytest -q`",
            tool_kind="execute",
            raw_input=arguments,
        ),
        PermissionDecided(tool_call_id="check-tests", name="run_command", verdict="allowed"),
    ]
    assert answered_tests(events) == ("pytest -q", "")  # a restored session's answer holds


def judged(content: str, report: Junit | str, *, error: bool = True) -> tuple[str, str]:
    ran = judge_output(PYTEST, ToolResult(content=content, is_error=error), 9, report)
    return ran.status, ran.detail


def test_the_verdict_takes_pytest_s_report() -> None:
    passing, failing, skipped = Junit(passed=3), Junit(passed=2, failed=1), Junit(skipped=3)
    assert judged("exit code 0\n...\n3 passed in 0.1s", passing, error=False)[0] == "passed"
    # The exit status or the output says otherwise than the report: a failure, said so.
    for content, report in [
        ("exit code 0\n3 passed in 0.1s", failing),
        ("exit code 0\n3 passed in 0.1s", skipped),
        ("exit code 127\nbash: python: command not found", passing),
        ("exit code 5\nno tests ran", passing),
    ]:
        status, detail = judged(content, report, error=not content.startswith("exit code 0"))
        assert status == "failed", content
        assert detail.startswith("the output and pytest's report disagree (the report counts")
    # No report where pytest always writes one: a failure.
    for content in ("exit code 0\n3 passed in 0.1s", "exit code 5\nno tests ran"):
        status, detail = judged(content, NO_REPORT, error=not content.startswith("exit code 0"))
        assert (status, detail.split(":")[0]) == ("failed", NO_REPORT), content
    # pytest's own "no tests" and a runner missing give no result; a report means it ran.
    assert judged("exit code 5\nno tests ran", Junit())[0] == "skipped"
    assert judged("exit code 0\n3 skipped", skipped, error=False)[0] == "skipped"
    missing = "exit code 1\n/usr/bin/python3: No module named pytest"
    assert judged(missing, NO_REPORT)[0] == "skipped"
    assert judged(missing, failing)[0] == "failed"
    printed = "exit code 1\nNo module named pytest\nE   assert 0\n1 failed in 0.1s"
    assert judged(printed, NO_REPORT)[0] == "failed"
    assert judged("exit code 1\n1 failed", failing)[0] == "failed"
