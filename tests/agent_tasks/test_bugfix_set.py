"""The ``bugfix`` set: projects whose own tests fail on a bug, checked by their original tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.agent_tasks.tasks import Task, load_tasks

BUGFIX = load_tasks(task_set="bugfix")


def _is_test_module(path: Path) -> bool:
    return path.suffix == ".py" and path.name.startswith("test_")


def test_the_set_has_twelve_projects_with_their_own_tests() -> None:
    assert [t.id.split("_")[0] for t in BUGFIX] == [f"b{n:02d}" for n in range(1, 13)]
    assert {t.kind for t in BUGFIX} == {"bugfix"}
    layouts = set()
    for task in BUGFIX:
        tests = [p for p in task.workspace.rglob("*") if _is_test_module(p)]
        assert tests, task.id
        layouts.add(tests[0].parent == task.workspace)
        sources = [p for p in task.workspace.rglob("*.py") if "test" not in p.name]
        assert 1 <= len([p for p in sources if p.name != "__init__.py"]) <= 3, task.id
        fixed = [p.relative_to(task.solution) for p in task.solution.rglob("*") if p.is_file()]
        # The solution changes source files that exist, never a test.
        assert fixed and all((task.workspace / rel).is_file() for rel in fixed), task.id
        assert not any(_is_test_module(rel) for rel in fixed), task.id
    assert layouts == {True, False}  # a root test_*.py in some, a tests/ folder in others


def _pytest_summary(workspace: Path) -> str:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("task", BUGFIX, ids=[t.id for t in BUGFIX])
def test_the_bug_fails_one_to_three_of_several_tests(task: Task, tmp_path: Path) -> None:
    summary = _pytest_summary(task.copy_workspace(tmp_path / "start"))
    found = re.fullmatch(r"(\d+) failed, (\d+) passed in .*", summary)
    assert found, summary
    failed, passed = int(found[1]), int(found[2])
    assert 1 <= failed <= 3 and passed >= 3, summary


def test_edited_tests_or_a_new_conftest_do_not_pass(tmp_path: Path) -> None:
    task = next(t for t in BUGFIX if t.id.startswith("b01"))
    test_file = Path("tests/test_invoice.py")
    emptied = task.copy_workspace(tmp_path / "emptied")
    trivial = "".join(f"def test_{n}():\n    assert True\n\n\n" for n in range(6))
    (emptied / test_file).write_text(trivial, encoding="utf-8")
    verdict = task.check(emptied)
    assert not verdict.passed and "test_total_with_discount" in verdict.reason

    hooked = task.copy_workspace(tmp_path / "hooked")
    (hooked / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n",
        encoding="utf-8",
    )
    assert _pytest_summary(hooked).startswith("6 passed")  # the hook hides the failure
    assert not task.check(hooked).passed


def test_a_test_the_agent_adds_does_not_change_the_count(tmp_path: Path) -> None:
    task = next(t for t in BUGFIX if t.id.startswith("b10"))
    solved = task.copy_workspace(tmp_path / "solved", with_solution=True)
    (solved / "tests" / "test_regression.py").write_text(
        "from urlbuild import query_value\n\n\n"
        "def test_tuple():\n    assert query_value((1, 2)) == '1,2'\n",
        encoding="utf-8",
    )
    assert task.check(solved).passed
