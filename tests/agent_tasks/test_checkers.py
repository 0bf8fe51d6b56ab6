"""Every task's checker fails on the starting files and passes on the reference solution."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks.agent_tasks.tasks import Task, load_tasks

TASKS = load_tasks()


def test_the_set_is_big_enough_and_mixed() -> None:
    assert len(TASKS) >= 20
    suffixes = {p.suffix for t in TASKS for p in t.workspace.rglob("*") if p.is_file()}
    assert {".py", ".js", ".sh"} <= suffixes
    two_file = [t for t in TASKS if len(list(t.workspace.iterdir())) >= 2]
    assert len(two_file) >= 3


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_checker_fails_on_the_start_and_passes_on_the_solution(task: Task, tmp_path: Path) -> None:
    assert task.text
    start = task.check(task.copy_workspace(tmp_path / "start"))
    assert not start.passed, f"the starting files already pass: {start.reason}"
    assert start.reason
    solved = task.check(task.copy_workspace(tmp_path / "solved", with_solution=True))
    assert solved.passed, solved.reason


def test_ids_select_by_prefix_or_name() -> None:
    first = TASKS[0]
    assert load_tasks([first.id.split("_")[0]]) == [first]
    assert load_tasks([first.id]) == [first]
    with pytest.raises(KeyError):
        load_tasks(["t999"])
