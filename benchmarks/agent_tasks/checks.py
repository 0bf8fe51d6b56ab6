"""Helpers for the task checkers: parse the result, run it in a fresh process, report why.

A checker is ``check(workspace: Path) -> Verdict`` in a task's ``check.py``. It looks at the
structure of the result (Python's ``ast``; for JavaScript and shell, the interpreter's own
parse and a run) and runs the code in a subprocess with a time limit, so a task's module is
never imported into the runner and a hanging result cannot stall it.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

RUN_TIMEOUT_S = 20.0
PYTEST_TIMEOUT_S = 120.0
PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
"""No third-party plugins (this environment's are for Cadenza's own suite): a plain run."""


@dataclass(frozen=True)
class Verdict:
    """A checker's answer: ``passed`` and, always, the reason."""

    passed: bool
    reason: str


def ok(reason: str = "ok") -> Verdict:
    return Verdict(True, reason)


def fail(reason: str) -> Verdict:
    return Verdict(False, reason)


class CheckFailed(Exception):
    """Raised inside a checker to fail with a reason (``run_check`` turns it into a Verdict)."""


def parse_python(workspace: Path, name: str) -> ast.Module:
    """The AST of ``workspace/name``; CheckFailed when missing or not valid Python."""
    path = workspace / name
    if not path.is_file():
        raise CheckFailed(f"{name} is missing")
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=name)
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise CheckFailed(f"{name} is not valid Python: {exc}") from None


def functions(tree: ast.AST) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function defined in ``tree`` (methods included), by name."""
    return {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def function(tree: ast.AST, name: str, where: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """The function ``name`` in ``tree``; CheckFailed when it is not defined."""
    found = functions(tree).get(name)
    if found is None:
        raise CheckFailed(f"{where} does not define {name}()")
    return found


def names_used(tree: ast.AST) -> set[str]:
    """Every identifier in ``tree``: names, attributes, definitions, imports, arguments."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name)
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return out


def calls_to(tree: ast.AST, name: str) -> list[ast.Call]:
    """Calls of a plain name ``name(...)``."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
    ]


def imported_modules(tree: ast.AST) -> set[str]:
    """Top-level module names imported (``import a.b`` gives ``a``; ``from x import y``: x)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module.split(".")[0])
    return out


def _run(
    argv: list[str],
    workspace: Path,
    timeout: float = RUN_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise CheckFailed(f"{argv[0]} ran longer than {timeout:g} s") from None


def _tail(text: str, lines: int = 2) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def _pytest_failures(text: str) -> str:
    """The first failing test's summary line and the run's count line.

    Found by their prefixes, not their place: where ``CI`` is set pytest prints the short
    summary untruncated, so a failure's message can run over several lines.
    """
    rows = text.strip().splitlines()
    failed = [row.strip() for row in rows if row.startswith(("FAILED ", "ERROR "))]
    return " | ".join(failed[:1] + [row.strip() for row in rows[-1:]])


def _node_error(text: str) -> str:
    """The error line of a Node.js failure and the two lines after it (its details)."""
    rows = [line.strip() for line in text.splitlines() if line.strip()]
    for i, row in enumerate(rows):
        if re.match(r"[A-Za-z]*Error\b", row):
            return " | ".join(rows[i : i + 3])
    return _tail(text)


def run_python(workspace: Path, code: str) -> str:
    """Run ``code`` with the workspace as the current folder (and on ``sys.path``); its stdout.

    CheckFailed when it exits non-zero (a failed ``assert`` in ``code`` included).
    """
    done = _run(
        [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, '.')\n" + code], workspace
    )
    if done.returncode != 0:
        raise CheckFailed(f"python: {_tail(done.stderr, 1) or 'exit ' + str(done.returncode)}")
    return done.stdout


def run_node(workspace: Path, code: str) -> str:
    """Run ``code`` with Node.js in the workspace; its stdout. CheckFailed on a non-zero exit."""
    node = shutil.which("node")
    if node is None:
        raise CheckFailed("node is not installed: the JavaScript task cannot be checked")
    done = _run([node, "-e", code], workspace)
    if done.returncode != 0:
        raise CheckFailed(f"node: {_node_error(done.stderr) or 'exit ' + str(done.returncode)}")
    return done.stdout


def node_syntax(workspace: Path, name: str) -> None:
    """CheckFailed unless ``node --check`` accepts ``workspace/name``."""
    node = shutil.which("node")
    if node is None:
        raise CheckFailed("node is not installed: the JavaScript task cannot be checked")
    if not (workspace / name).is_file():
        raise CheckFailed(f"{name} is missing")
    done = _run([node, "--check", name], workspace)
    if done.returncode != 0:
        raise CheckFailed(f"{name} does not parse: {_node_error(done.stderr)}")


def run_bash(workspace: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``bash -n`` then run ``workspace/script`` with ``args``; the finished process."""
    if not (workspace / script).is_file():
        raise CheckFailed(f"{script} is missing")
    syntax = _run(["bash", "-n", script], workspace)
    if syntax.returncode != 0:
        raise CheckFailed(f"{script} does not parse: {_tail(syntax.stderr)}")
    return _run(["bash", script, *args], workspace)


_JS_NOISE = re.compile(
    r"""//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`""", re.S
)


def js_identifiers(source: str) -> set[str]:
    """Identifiers of JavaScript source, comments and string literals left out.

    No JavaScript parser is available to Python here; this tokenizer is enough for the small
    task files (no regular-expression literals or template substitutions in them).
    """
    code = _JS_NOISE.sub(" ", source)
    return set(re.findall(r"[A-Za-z_$][A-Za-z0-9_$]*", code))


def run_pytest(workspace: Path, *targets: str, expect: int) -> None:
    """Run pytest on ``targets`` in the workspace; CheckFailed unless ``expect`` tests pass.

    The count guards against tests that were deleted or skipped to make the run green.
    """
    # Bounded generously since pytest starts slowly on a loaded machine.
    env = {**os.environ, **PYTEST_ENV}
    done = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=line", *targets],
        workspace,
        timeout=PYTEST_TIMEOUT_S,
        env=env,
    )
    summary = _tail(done.stdout, 1)
    if done.returncode != 0:
        failures = _pytest_failures(done.stdout) or f"exit {done.returncode}"
        raise CheckFailed(f"pytest: {failures}")
    passed = re.search(r"(\d+) passed", summary)
    if passed is None or int(passed.group(1)) != expect or re.search(r"skipped|error", summary):
        raise CheckFailed(f"pytest: expected {expect} passing tests, got: {summary}")


# What a project's own test run is made of: laid back from the starting files before the run.
_TEST_CONFIG = {"conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"}
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache"
)


def _is_test_file(path: Path) -> bool:
    name = path.name
    is_module = name.startswith("test_") or name.endswith("_test.py")
    return (is_module and path.suffix == ".py") or name in _TEST_CONFIG


def run_original_tests(workspace: Path, task_folder: Path, *, expect: int) -> None:
    """Run the task's starting tests on the workspace's code; CheckFailed unless ``expect`` pass.

    The workspace is copied to a temporary folder, the starting test files (test modules,
    ``conftest.py`` and pytest's configuration files) are laid over the copy, and pytest runs
    those test modules alone. Test files and configuration the task lacked are left out: a
    run made green by editing or deleting tests, or by a new ``conftest.py`` or option, fails,
    and a test the agent added does not change the count.
    """
    start = task_folder / "workspace"
    originals = sorted(p.relative_to(start) for p in start.rglob("*") if _is_test_file(p))
    modules = [rel.as_posix() for rel in originals if rel.name not in _TEST_CONFIG]
    if not modules:
        raise CheckFailed(f"the task {task_folder.name} has no test modules")
    with tempfile.TemporaryDirectory(prefix="agent-task-tests-") as tmp:
        copy = Path(tmp) / "workspace"
        shutil.copytree(workspace, copy, ignore=_NOT_COPIED, symlinks=True)
        for added in [p for p in copy.rglob("*") if p.name in _TEST_CONFIG]:
            if added.relative_to(copy) not in originals:  # hooks or options the task lacked
                added.unlink()
        for rel in originals:
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            (copy / rel).unlink(missing_ok=True)  # never write through a link
            shutil.copyfile(start / rel, copy / rel)
        run_pytest(copy, *modules, expect=expect)


def run_node_tests(workspace: Path, target: str) -> None:
    """``node --test target`` in the workspace; CheckFailed when a test fails."""
    node = shutil.which("node")
    if node is None:
        raise CheckFailed("node is not installed: the JavaScript task cannot be checked")
    done = _run([node, "--test", target], workspace)
    if done.returncode != 0:
        failing = [line.strip() for line in done.stdout.splitlines() if line.startswith("not ok")]
        raise CheckFailed(f"node --test: {' | '.join(failing) or _tail(done.stdout)}")


def unchanged(workspace: Path, task_folder: Path, name: str) -> None:
    """CheckFailed when ``name`` differs from the task's starting file (tests must stay)."""
    start = task_folder / "workspace" / name
    path = workspace / name
    if not path.is_file() or path.read_bytes() != start.read_bytes():
        raise CheckFailed(f"{name} was changed or removed; it must stay as it was")
