"""The task set: one folder per task under ``tasks/``.

A task folder holds ``task.md`` (the text given to the agent), ``workspace/`` (the starting
files, copied to a temporary folder for each run), ``check.py`` (``check(workspace) ->
Verdict``) and ``solution/`` (reference files laid over the workspace: the checker must pass
on them and fail on the starting files, which ``tests/agent_tasks`` verifies).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.agent_tasks.checks import CheckFailed, Verdict

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
SETS = {
    "edits": TASKS_DIR,
    "checked": Path(__file__).resolve().parent / "tasks_checked",
    "implement": Path(__file__).resolve().parent / "tasks_implement",
    "bugfix": Path(__file__).resolve().parent / "tasks_bugfix",
}
"""The task sets: ``edits``, the first 22 single-change tasks (``tNN``); ``checked``, the kinds
those lack (``cNN``): renames across 3+ files, changes that break callers, implementing a
function where the workspace has unit tests, fixing failing tests, and following the project's
rule files (``rules``: only an AGENTS.md, CLAUDE.md or the like says what is right). Each task
of ``checked`` names its kind in a ``kind`` file. ``implement`` (``iNN``): functions (and a
class's methods) to write from their docstrings, with unit tests in the workspace and hidden
cases in the checker; one stub in a longer file (``i08``), so a whole-file rewrite is not
the cheap way. ``bugfix`` (``bNN``): "my tests fail, fix the bug" in a small project of 1-3
modules with its own tests, one real bug each (two wrong lines in one task, the bug one import
away from the failing test in some); the checker runs the starting tests on the result and
hidden cases."""

Checker = Callable[[Path], Verdict]


@dataclass(frozen=True)
class Task:
    """One task: its id (the folder name), its text, its folder and its kind."""

    id: str
    text: str
    folder: Path
    kind: str = "edit"

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"

    @property
    def solution(self) -> Path:
        return self.folder / "solution"

    def checker(self) -> Checker:
        """The ``check`` function of the task's ``check.py``."""
        path = self.folder / "check.py"
        spec = importlib.util.spec_from_file_location(f"agent_task_check_{self.id}", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        check: Checker = module.check
        return check

    def copy_workspace(self, dest: Path, *, with_solution: bool = False) -> Path:
        """Copy the starting files to ``dest`` (created); with the solution laid over them."""
        shutil.copytree(self.workspace, dest)
        if with_solution:
            shutil.copytree(self.solution, dest, dirs_exist_ok=True)
        return dest

    def check(self, workspace: Path) -> Verdict:
        """Run the checker; a checker that crashes fails with the exception as the reason."""
        try:
            return self.checker()(workspace)
        except CheckFailed as exc:
            return Verdict(False, str(exc))
        except Exception as exc:  # a result the checker did not foresee: still a fail
            return Verdict(False, f"checker error: {type(exc).__name__}: {exc}")


def _kind(folder: Path) -> str:
    path = folder / "kind"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else "edit"


def load_tasks(ids: Iterable[str] | None = None, task_set: str = "edits") -> list[Task]:
    """Every task of ``task_set``, in id order; or those named by ``ids`` (a full id or its
    ``tNN`` prefix).

    Raises:
        KeyError: An id that names no task, or an unknown set.
    """
    if task_set not in SETS:
        raise KeyError(f"no task set {task_set!r}; known: {', '.join(SETS)}")
    tasks = [
        Task(
            id=p.name,
            text=(p / "task.md").read_text(encoding="utf-8").strip(),
            folder=p,
            kind=_kind(p),
        )
        for p in sorted(SETS[task_set].iterdir())
        if (p / "task.md").is_file()
    ]
    if ids is None:
        return tasks
    chosen: list[Task] = []
    for wanted in ids:
        found = [t for t in tasks if t.id == wanted or t.id.split("_", 1)[0] == wanted]
        if not found:
            raise KeyError(f"no task {wanted!r}; known: {', '.join(t.id for t in tasks)}")
        chosen.extend(t for t in found if t not in chosen)
    return chosen
