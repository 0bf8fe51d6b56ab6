"""Every task's checker fails on the starting files and passes on the reference solution."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from benchmarks.agent_tasks.tasks import Task, load_tasks

TASKS = load_tasks()
CHECKED = load_tasks(task_set="checked")
IMPLEMENT = load_tasks(task_set="implement")
BUGFIX = load_tasks(task_set="bugfix")


def test_the_set_is_big_enough_and_mixed() -> None:
    assert len(TASKS) >= 20
    suffixes = {p.suffix for t in TASKS for p in t.workspace.rglob("*") if p.is_file()}
    assert {".py", ".js", ".sh"} <= suffixes
    two_file = [t for t in TASKS if len(list(t.workspace.iterdir())) >= 2]
    assert len(two_file) >= 3


def test_the_checked_set_covers_the_kinds_the_first_lacks() -> None:
    assert len(CHECKED) >= 12
    kinds = Counter(t.kind for t in CHECKED)
    assert set(kinds) == {"rename", "callers", "implement", "failing_test", "rules"}
    assert min(kinds.values()) >= 3
    rule_files = {
        "AGENTS.md",
        "CLAUDE.md",
        ".cursorrules",
        ".clinerules",
        "copilot-instructions.md",
    }
    for task in (t for t in CHECKED if t.kind == "rules"):  # only a rule file says what is right
        assert any(p.name in rule_files for p in task.workspace.rglob("*")), task.id
    renames = [t for t in CHECKED if t.kind == "rename"]
    assert all(sum(1 for p in t.solution.rglob("*") if p.is_file()) >= 3 for t in renames)
    with_tests = [t for t in CHECKED if t.kind in ("implement", "failing_test")]
    assert all(any("test" in p.name for p in t.workspace.rglob("*")) for t in with_tests)


def test_the_implement_set_has_tests_in_each_workspace() -> None:
    assert len(IMPLEMENT) >= 8 and {t.kind for t in IMPLEMENT} == {"implement"}
    assert all(any(p.name.startswith("test_") for p in t.workspace.iterdir()) for t in IMPLEMENT)


ALL = TASKS + CHECKED + IMPLEMENT + BUGFIX


@pytest.mark.parametrize("task", ALL, ids=[t.id for t in ALL])
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
