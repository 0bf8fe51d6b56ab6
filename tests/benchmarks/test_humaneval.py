"""The HumanEval development set: every generated workspace is a real task (no model).

Each workspace's stub must fail its tests and the problem's canonical solution must pass all
of them, counted from pytest's JUnit report; the judge must ignore what an agent did to the
tests. pytest runs once per group of workspaces whose module names differ (two problems may
share a function name), so the 60 workspaces take two or three pytest processes per side.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest
from benchmarks.humaneval.judge import HumanEvalTask, build_tasks, judge_workspace
from benchmarks.humaneval.problems import DEV_SIZE, dev_indices, load_problems, select


@pytest.fixture(scope="module")
def dev_tasks(tmp_path_factory: pytest.TempPathFactory) -> list[HumanEvalTask]:
    return build_tasks(select(load_problems()), tmp_path_factory.mktemp("humaneval"))


def _groups(tasks: list[HumanEvalTask]) -> list[list[HumanEvalTask]]:
    """Tasks split so that no group holds two modules of the same name."""
    groups: list[list[HumanEvalTask]] = []
    for task in tasks:
        module = _meta(task)["module"]
        home = next((g for g in groups if all(_meta(t)["module"] != module for t in g)), None)
        if home is None:
            groups.append(home := [])
        home.append(task)
    return groups


def _meta(task: HumanEvalTask) -> dict[str, object]:
    meta: dict[str, object] = json.loads((task.folder / "meta.json").read_text())
    return meta


def _outcomes(folders: list[Path], report: Path) -> dict[str, list[bool]]:
    """pytest over every folder at once: each test file's outcomes (True: passed)."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            f"--rootdir={report.parent}",
            f"--junitxml={report}",
            *(str(f) for f in folders),
        ],
        cwd=report.parent,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        ok = not any(child.tag in ("failure", "error", "skipped") for child in case)
        outcomes[module].append(ok)
    return outcomes


def test_the_development_set_is_a_fixed_stride_over_all_problems() -> None:
    problems = load_problems()
    assert len(problems) == 164
    chosen = select(problems)
    assert len(chosen) == DEV_SIZE == len({p.index for p in chosen})
    assert [p.index for p in chosen] == dev_indices()
    assert chosen[0].index == 0 and chosen[-1].index >= 160  # spans the benchmark
    assert [p.id for p in select(problems, ["he032", "32", "HumanEval/32"])] == ["he032_find_zero"]
    with pytest.raises(KeyError):
        select(problems, ["he999"])


def test_every_stub_fails_and_every_solution_passes(
    dev_tasks: list[HumanEvalTask], tmp_path: Path
) -> None:
    for n, group in enumerate(_groups(dev_tasks)):
        stubs = [t.workspace for t in group]
        solved = []
        for task in group:
            folder = tmp_path / f"solved-{task.id}"
            task.copy_workspace(folder, with_solution=True)
            solved.append(folder)
        failing = _outcomes(stubs, tmp_path / f"stubs-{n}.xml")
        passing = _outcomes(solved, tmp_path / f"solved-{n}.xml")
        for task in group:
            meta = _meta(task)
            test_module = str(meta["test_module"]).removesuffix(".py")
            assert len(failing[test_module]) == meta["tests"] >= 1, task.id
            assert not all(failing[test_module]), f"{task.id}: the stub passes its tests"
            assert passing[test_module] == [True] * int(str(meta["tests"])), task.id


def test_each_task_names_its_function_module_and_tests(dev_tasks: list[HumanEvalTask]) -> None:
    for task in dev_tasks:
        meta = _meta(task)
        stub = (task.workspace / str(meta["module"])).read_text()
        assert "raise NotImplementedError" in stub
        assert str(meta["module"]) in task.text and str(meta["test_module"]) in task.text
        assert sorted(p.name for p in task.workspace.iterdir()) == sorted(
            [str(meta["module"]), str(meta["test_module"])]
        )


def test_the_judge_runs_the_original_tests_on_the_agents_module(
    dev_tasks: list[HumanEvalTask], tmp_path: Path
) -> None:
    task = dev_tasks[0]
    meta = _meta(task)
    # The agent rewrote the tests to pass without implementing anything: still a fail.
    cheat = task.copy_workspace(tmp_path / "cheat")
    (cheat / str(meta["test_module"])).write_text("def test_nothing():\n    assert True\n")
    verdict = judge_workspace(task.folder, cheat)
    assert not verdict.passed and verdict.tests_passed == 0
    assert verdict.tests_total == meta["tests"]
    # The agent implemented the function and deleted the tests: a pass, on the original tests.
    solved = task.copy_workspace(tmp_path / "solved", with_solution=True)
    (solved / str(meta["test_module"])).unlink()
    verdict = task.judge(solved)
    assert verdict.passed and verdict.tests_passed == meta["tests"]
    assert task.check(solved).passed
    # No module at all: a fail that says so.
    shutil.rmtree(solved)
    solved.mkdir()
    assert "missing" in judge_workspace(task.folder, solved).reason
