"""The judge: the task's own tests, run by the harness in a clean copy after an agent's work.

Only the module under test is taken from the agent's workspace; it is laid over a fresh copy of
the task's starting files, so tests the agent changed, deleted or added do not count. pytest
runs without third-party plugins, bounded in time, and its JUnit XML report gives the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict
from benchmarks.agent_tasks.tasks import Task
from benchmarks.humaneval.problems import Problem, write_task

PYTEST_TIMEOUT_S = 60.0
"""An implementation that loops forever fails after this long (the tests take well under 1 s)."""
_NOT_PASSED = frozenset({"failure", "error", "skipped"})
"""JUnit XML children of a test case that did not pass."""


@dataclass(frozen=True)
class Judgement:
    """The tests' verdict: every test passed, how many passed of how many, and why."""

    passed: bool
    tests_passed: int
    tests_total: int
    reason: str
    output: str = ""
    """pytest's output, for the agent that gets the failures (bounded by the caller)."""


def pytest_env() -> dict[str, str]:
    """A plain pytest: no third-party plugins (the project's are for its own suite)."""
    return {
        **os.environ,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def run_tests(folder: Path, test_module: str, expected: int) -> Judgement:
    """Run ``test_module`` in ``folder``; passed only when all ``expected`` tests pass."""
    report = folder / ".junit.xml"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--tb=short",
        f"--junitxml={report}",
        test_module,
    ]
    try:
        done = subprocess.run(
            argv,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=PYTEST_TIMEOUT_S,
            env=pytest_env(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Judgement(False, 0, expected, f"the tests ran longer than {PYTEST_TIMEOUT_S:g} s")
    output = done.stdout + done.stderr
    try:
        suite = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        return Judgement(False, 0, expected, f"pytest exit {done.returncode}", output)
    cases = list(suite.iter("testcase"))
    total = len(cases)
    passed = sum(1 for case in cases if not any(child.tag in _NOT_PASSED for child in case))
    ok = passed == expected == total and done.returncode == 0
    reason = f"{passed}/{expected} tests passed"
    if total != expected:
        reason += f" ({total} collected)"
    return Judgement(ok, passed, expected, reason, output)


def judge_workspace(task_folder: Path, workspace: Path) -> Judgement:
    """The task's tests on ``workspace``'s module, in a clean copy of the starting files.

    ``task_folder`` is a folder written by ``problems.write_task`` (its ``meta.json`` names the
    module, the test module and the number of tests).
    """
    meta = json.loads((task_folder / "meta.json").read_text(encoding="utf-8"))
    module, tests = workspace / meta["module"], int(meta["tests"])
    if not module.is_file():
        return Judgement(False, 0, tests, f"{meta['module']} is missing")
    with tempfile.TemporaryDirectory(prefix="humaneval-judge-") as scratch:
        clean = Path(scratch) / "workspace"
        shutil.copytree(task_folder / "workspace", clean)
        shutil.copyfile(module, clean / meta["module"])
        return run_tests(clean, meta["test_module"], tests)


@dataclass(frozen=True)
class HumanEvalTask(Task):
    """A HumanEval problem as a runner task (``agent_tasks.run.run_one``); its check is the
    judge."""

    judgements: dict[str, Judgement] = field(default_factory=dict, compare=False, hash=False)
    """The judgement of each workspace judged, so the runner's check and the harness share one
    test run."""

    def judge(self, workspace: Path) -> Judgement:
        key = str(workspace.resolve())
        if key not in self.judgements:
            self.judgements[key] = judge_workspace(self.folder, workspace)
        return self.judgements[key]

    def check(self, workspace: Path) -> Verdict:
        judgement = self.judge(workspace)
        return Verdict(judgement.passed, judgement.reason)


def build_tasks(problems: list[Problem], root: Path) -> list[HumanEvalTask]:
    """Write each problem's task folder under ``root``; the tasks, in the problems' order."""
    tasks = []
    for problem in problems:
        folder = write_task(problem, root / problem.id)
        tasks.append(
            HumanEvalTask(
                id=problem.id,
                text=(folder / "task.md").read_text(encoding="utf-8").strip(),
                folder=folder,
                kind="implement",
            )
        )
    return tasks


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.humaneval.judge TASK_FOLDER WORKSPACE``: the judgement as JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.humaneval.judge")
    parser.add_argument("task_folder", type=Path)
    parser.add_argument("workspace", type=Path)
    args = parser.parse_args(argv)
    print(json.dumps(asdict(judge_workspace(args.task_folder, args.workspace))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
