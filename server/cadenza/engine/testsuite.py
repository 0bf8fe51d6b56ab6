"""Which command runs a workspace's tests (the done check ``tests``, ``engine.project_tests``).

``[checks] test`` in ``cadenza.toml`` names it; unset, it is detected from the workspace's
files, first match wins:

- pytest: ``pytest.ini``, ``pytest.toml`` (or either with a leading dot), ``[tool.pytest...]``
  in ``pyproject.toml``, ``[tool:pytest]`` in ``setup.cfg``, ``[pytest]`` in ``tox.ini``,
  ``conftest.py``, or ``test_*.py`` /
  ``*_test.py`` files at the root or in ``tests/`` / ``test/``. It runs with the workspace's
  own virtual environment (``.venv``, ``venv``) when it has one, else with the interpreter of
  ``pytest`` on PATH, else ``python3``, always as ``python -m pytest`` (the root on
  ``sys.path``); quiet, short tracebacks, no cache folder written;
- ``npm test`` when ``package.json`` has a ``test`` script (not npm's placeholder);
- ``go test ./...`` with ``go.mod``.

Detection only reads files (under the workspace path rule: no link out of the workspace, regular
files only, bounded); nothing runs until the person allows it (the permission gate).

``is_test_file`` says which files are the tests, or decide how they run: a change to one cannot
count as a fix the tests confirm (candidates refuse it, the done check says so).
"""

from __future__ import annotations

import configparser
import importlib.machinery
import json
import os
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cadenza.engine.junit import Junit
from cadenza.engine.test_report import read_report
from cadenza.workspace_files import WorkspaceFileError, read_workspace_text

PYTEST_ARGS = "-q --tb=short -p no:cacheprovider"
"""Quiet, short tracebacks (the model reads the tail), no ``.pytest_cache`` in the workspace."""

PYTEST_NO_TESTS = 5
"""pytest's exit status when it collected no test."""

NPM_PLACEHOLDER = "no test specified"
"""What ``npm init`` puts in the test script: not a test suite."""

TEST_FOLDERS = ("tests", "test")
PYTEST_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "conftest.py")
"""Files that make pytest the runner by being there (pytest reads each, even empty)."""
TEST_SETTINGS = frozenset(
    {
        *PYTEST_FILES,
        *("setup.cfg", "pyproject.toml", "tox.ini", "tox.toml", "noxfile.py", "pyvenv.cfg"),
        *("package.json", ".npmrc", "go.mod", "go.work"),
    }
)
"""Files that say which tests run and how (a test script, pytest's options and plugins, the
interpreter's packages, npm's script shell, Go's module versions)."""
RUNNER_SETTINGS = ("jest", "vitest", "vite.config", "mocharc", "babel.config", "babelrc")
"""How the JavaScript runners' settings are named, leading dot aside (``jest.config.ts``,
``vitest.workspace.js``, ``.mocharc.yml``): vite's and babel's say how the tests are loaded."""
RUNNER_MODULES = sys.stdlib_module_names | {
    *("pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "pygments"),
    *("exceptiongroup", "tomli", "colorama", "sitecustomize", "usercustomize"),
}
"""Modules imported before a test runs: pytest's own, its requirements', Python's start-up
hooks and the standard library (pytest imports much of it first). ``python -m pytest`` puts
the workspace root first on ``sys.path``: a module defined there is imported instead."""
IMPORTABLE = tuple(importlib.machinery.all_suffixes())
"""How the files Python imports are named (``.py``, ``.pyc``, ``.abi3.so``...)."""
PACKAGE_FOLDERS = frozenset({"site-packages", "dist-packages", "node_modules"})
"""Folders of installed packages, the runners among them (Python's ``.pth`` start-up files
are only read there)."""
TEST_SUFFIXES = ("_test.py", "_test.go")
SCRIPT_EXTENSIONS = frozenset({"js", "jsx", "ts", "tsx", "mjs", "cjs"})
MAX_CONFIG_BYTES = 1_000_000
"""A project file read for detection larger than this counts as absent."""


@dataclass(frozen=True, kw_only=True)
class SuiteCommand:
    """The command that runs a workspace's tests.

    Attributes:
        command: The shell command line, run at the workspace root.
        source: Where it came from, for the person (``cadenza.toml``, ``pytest``...).
        no_tests_exit: The exit status meaning "no test was found" (the check is skipped), or
            None.
        missing: Output that says the runner itself is not installed (the check is skipped).
        junit: Cadenza built the command (pytest): each run asks pytest for its report too,
            and the verdict takes it (``engine.junit``). A person's own command is judged by
            its exit status and output alone.
    """

    command: str
    source: str
    no_tests_exit: int | None = None
    missing: str | None = None
    junit: bool = False


def suite_command(root: Path, configured: str | None) -> SuiteCommand | None:
    """The workspace's test command: ``configured`` when set ("" means none), else detected."""
    if configured is not None:
        text = configured.strip()
        return SuiteCommand(command=text, source="cadenza.toml") if text else None
    return _pytest(root) or _npm(root) or _go(root)


def _pytest(root: Path) -> SuiteCommand | None:
    if not _uses_pytest(root):
        return None
    for venv in (".venv", "venv"):
        if (root / venv / "bin" / "python").is_file():
            command = f"{venv}/bin/python -m pytest {PYTEST_ARGS}"
            break
    else:
        command = f"{_pytest_python()} -m pytest {PYTEST_ARGS}"
    return SuiteCommand(
        command=command,
        source="pytest",
        no_tests_exit=PYTEST_NO_TESTS,
        missing="No module named pytest",
        junit=True,
    )


def _pytest_python() -> str:
    """The interpreter of the ``pytest`` on PATH (from its script's ``#!`` line), else python3.

    Always ``python -m pytest``: it puts the workspace root on ``sys.path``, as the bare
    ``pytest`` script does not, so a flat project's ``tests/`` can import its modules (the
    ``checked`` set's c07 failed its test check with "No module named 'text'" that way).
    """
    script = shutil.which("pytest")
    if script is not None:
        try:
            with open(script, "rb") as file:
                first = file.readline(4096).decode("utf-8", "replace")
        except OSError:
            first = ""
        interpreter = first[2:].strip() if first.startswith("#!") else ""
        usable = " " not in interpreter and Path(interpreter).name.startswith("python")
        if usable and Path(interpreter).is_file():  # not pip's `#!/bin/sh` wrapper of long paths
            return shlex.quote(interpreter)
    return "python3"


def _uses_pytest(root: Path) -> bool:
    """Whether the workspace's files say it has pytest tests."""
    if any((root / name).is_file() for name in PYTEST_FILES):
        return True
    tool = _toml(root, "pyproject.toml").get("tool")
    if isinstance(tool, dict) and "pytest" in tool:
        return True
    if _ini_has(root, "setup.cfg", "tool:pytest") or _ini_has(root, "tox.ini", "pytest"):
        return True
    folders = [root, *(root / name for name in TEST_FOLDERS)]
    return any(_has_test_files(folder) for folder in folders if folder.is_dir())


def is_test_file(relative: Path) -> bool:
    """Whether a workspace-relative path is a test, or says which tests run and how.

    By the conventions of the detected runners: a ``tests/``, ``test/`` or ``__tests__/``
    folder, ``test_*.py``, ``*_test.py``, ``*_test.go``, ``*.test.js`` / ``*.spec.ts`` and
    their kin, the files of ``TEST_SETTINGS`` and ``RUNNER_SETTINGS``, and what stands in for
    the runner (``_replaces_runner``).
    """
    name = relative.name
    if any(part in (*TEST_FOLDERS, "__tests__") for part in relative.parts[:-1]):
        return True
    bare = name.removeprefix(".")
    if name in TEST_SETTINGS or any(bare == s or bare.startswith(f"{s}.") for s in RUNNER_SETTINGS):
        return True
    if (name.startswith("test_") and name.endswith(".py")) or name.endswith(TEST_SUFFIXES):
        return True
    parts = name.split(".")
    if len(parts) >= 3 and parts[-2] in ("test", "spec") and parts[-1] in SCRIPT_EXTENSIONS:
        return True
    return _replaces_runner(relative)


def _replaces_runner(relative: Path) -> bool:
    """Whether writing ``relative`` changes the test runner rather than the code it tests.

    Anything in installed packages (``PACKAGE_FOLDERS``); at the root: a distribution's
    metadata (``*.dist-info``, ``*.egg-info``: its entry points load pytest plugins), or the
    file that defines a top-level module of ``RUNNER_MODULES`` (``pytest.py``,
    ``_pytest/__init__.py``, ``argparse.py``), imported instead of the real one. A folder
    without ``__init__`` never hides a module found later on ``sys.path``.
    """
    parts = relative.parts
    if not parts:
        return False
    if PACKAGE_FOLDERS.intersection(parts[:-1]) or parts[0].endswith((".dist-info", ".egg-info")):
        return True
    return root_module(relative) in RUNNER_MODULES


def root_module(relative: Path) -> str | None:
    """The top-level module a workspace-relative path defines at the root, if any.

    ``NAME.py`` (or another suffix Python imports) and ``NAME/__init__.py`` define ``NAME``;
    a folder without ``__init__`` never hides a module found later on ``sys.path``.
    """
    parts = relative.parts
    if not parts or not parts[-1].endswith(IMPORTABLE):
        return None
    module = parts[-1].partition(".")[0]
    if len(parts) == 2 and module == "__init__":
        return parts[0]
    return module if len(parts) == 1 else None


def installed_modules(root: Path) -> frozenset[str]:
    """Top-level modules installed for the Pythons a test command may run, the root's aside.

    This process's import path, the workspace's virtual environments (``.venv``, ``venv``),
    the system Python's package folders and the user's, listed, not imported: a new module
    at the root named like one of them is imported instead of it when the root comes first on
    the path (``python -m pytest``), pytest's plugins and their requirements included.
    """
    top = root.resolve()
    folders = [Path(p) for p in sys.path if p]
    for venv in (".venv", "venv"):
        folders += (root / venv).glob("lib/python3*/site-packages")
    folders += [
        Path("/usr/lib/python3/dist-packages"),
        *Path("/usr/local/lib").glob("python3*/*-packages"),
        *Path(os.path.expanduser("~")).glob(".local/lib/python3*/site-packages"),
    ]
    names: set[str] = set()
    for folder in folders:
        try:
            if folder.resolve() == top or not folder.is_dir():
                continue
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            module = root_module(Path(entry.name)) if not entry.is_dir() else entry.name
            if module and module.isidentifier():
                names.add(module)
    return frozenset(names)


def _has_test_files(folder: Path) -> bool:
    try:
        names = [p.name for p in folder.iterdir() if p.is_file()]
    except OSError:
        return False
    return any(
        n.endswith(".py") and (n.startswith("test_") or n.endswith("_test.py")) for n in names
    )


def _read(root: Path, name: str) -> str:
    """A config file at the root, under the workspace path rule ("" when absent or refused)."""
    try:
        return read_workspace_text(root, name, max_bytes=MAX_CONFIG_BYTES) or ""
    except WorkspaceFileError:
        return ""


def _toml(root: Path, name: str) -> dict[str, object]:
    try:
        return tomllib.loads(_read(root, name))
    except tomllib.TOMLDecodeError:
        return {}


def _ini_has(root: Path, name: str, section: str) -> bool:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(_read(root, name))
    except configparser.Error:
        return False
    return parser.has_section(section)


def _npm(root: Path) -> SuiteCommand | None:
    try:
        package = json.loads(_read(root, "package.json"))
    except ValueError:
        return None
    scripts = package.get("scripts") if isinstance(package, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str) or not script.strip() or NPM_PLACEHOLDER in script:
        return None
    return SuiteCommand(command="npm test --silent", source="package.json")


def _go(root: Path) -> SuiteCommand | None:
    if not (root / "go.mod").is_file():
        return None
    return SuiteCommand(command="go test ./...", source="go.mod")


@dataclass(frozen=True, kw_only=True)
class SuiteRun:
    """What running the tests found.

    Attributes:
        status: ``passed``; ``failed`` (the model must fix it); ``skipped`` (not run, or
            nothing to judge by), with the reason in ``detail``.
        detail: What was found (the person and the model read it; ``engine.checks`` adds
            what the model should do).
        output: What the command printed (as ``run_command`` bounds it); "" when not run.
        timed_out: The run was stopped at its time bound.
        cannot_run: ``skipped`` because the command ran but could not run the tests (not
            found, the runner missing, no test found or reported): nothing confirms the work,
            which may be the cause.
        junit: pytest's report of the run, when it was asked for and read (``engine.junit``).
        doubt: ``failed`` because the output cannot be taken at its word: pytest's report is
            missing or says otherwise ("" when not).
    """

    status: Literal["passed", "failed", "skipped"]
    detail: str
    output: str = ""
    timed_out: bool = False
    cannot_run: bool = False
    junit: Junit | None = None
    doubt: str = ""

    @property
    def counts(self) -> dict[str, int]:
        """The run's counts (``{"failed": 1, "passed": 2}``).

        pytest's report's when it was read, else those the output prints; none when they are
        unknown, or the output is doubted.
        """
        if self.junit is not None:
            return self.junit.counts
        return {} if self.doubt else read_report(self.output).counts
