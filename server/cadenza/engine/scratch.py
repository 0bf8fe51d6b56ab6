"""A scratch copy of the workspace, where one candidate reply's edits are made and tested.

The candidates of a step (``engine.candidates``) are judged by the workspace's tests, but
only the kept one may reach the workspace. Each is tried in a temporary folder: a copy of the
workspace's files as the tools see them (version control, caches and ``.cadenza`` left out;
a dependency folder, ``.venv``, ``venv``, ``node_modules`` or another virtual environment, is
linked, not copied, so the test command finds its interpreter and packages), the candidate's
file changes made there by the same tools with the same checks (``ScratchHost`` writes them to
the copy's disk), then the test command run in the copy. The copy is removed afterwards.
Nothing is written to the workspace, and nothing runs in it.

Only regular files, folders and symbolic links (as links) are copied: a FIFO, a socket or a
device is left out (reading one would block, or never end). A change to a protected path
(``tools.protected``) is refused in the copy as it would be asked in the workspace: nobody is
there to consent, and the copy's test run would act on it. So is a change to a test, or to
what says which tests run and how, the runner's own modules included (``testsuite.is_test_file``),
or a new root module named like an installed one (``testsuite.installed_modules``, listed
once for a round of copies: ``InstalledModules``): the tests judge the candidate, and a reply
that rewrote them would judge itself. A reply that adds a root module no other Python file of
the copy imports or names is not judged either (``ScratchHost.unnamed_modules``): nothing of
the project would import it, but pytest or a plugin that looks for a module it lacks
(``trio``) would.

Bounds: a workspace of more than ``MAX_FILES`` files and folders or ``MAX_BYTES`` bytes is not
copied (``TooLarge``): candidates are then not tried.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import stat
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

from cadenza.engine.junit import report_file
from cadenza.engine.protected import touched_paths
from cadenza.engine.runtime import Runtime
from cadenza.engine.suite_verdict import judge_output
from cadenza.engine.testsuite import SuiteCommand, installed_modules, is_test_file, root_module
from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.change import FileChangeTool
from cadenza.tools.dispatch.execution import prepare, run
from cadenza.tools.fs import apply_on_disk
from cadenza.tools.host import DocumentSnapshot, EditOutcome, FileEdit
from cadenza.tools.intel import CodeIntel
from cadenza.tools.protected import protected_reason
from cadenza.tools.read import SKIP_DIRS
from cadenza.tools.workspace_scan import VENV_MARKER

MAX_FILES = 5_000
"""Files and folders a workspace may hold to be copied."""
MAX_BYTES = 100_000_000
"""Bytes a workspace's copied files may hold in all."""
MAX_NAMING_BYTES = 1_000_000
"""Python files larger than this are not read for a use of a module a reply added."""
LINKED_DIRS = frozenset({".venv", "venv", "node_modules"})
"""Dependency folders linked into the copy (the test command runs from them), not copied."""


class TooLarge(Exception):
    """The workspace is too large to copy for each candidate."""


@dataclass(frozen=True, kw_only=True)
class Trial:
    """One candidate reply tried in a scratch copy.

    Attributes:
        passed: Tests that passed there; None when it could not be judged.
        total: Tests counted in its run (passed, failed, errors), or None when unknown.
        why: Why it could not be judged, in the person's words ("" when it was).
        changes: Whether the reply changes files; one that does not counts the last run.
    """

    passed: int | None
    total: int | None = None
    why: str = ""
    changes: bool = True


class InstalledModules:
    """A workspace's installed top-level modules, listed on first need, then kept.

    ``testsuite.installed_modules`` lists them when a copy first needs them. One serves the
    copies of one round of candidates: they link the same virtual environments, and the round
    runs only the tests in them. The next round makes its own (a command the model ran in
    between may have installed a package).

    Args:
        root: The workspace (its ``.venv`` and ``venv`` are the copies' own, linked).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._names: frozenset[str] | None = None

    def names(self) -> frozenset[str]:
        """The modules' names, listed on the first call."""
        if self._names is None:
            self._names = installed_modules(self.root)
        return self._names


class ScratchHost:
    """The ``ToolHost`` of a scratch copy: documents are its files, edits go to its disk.

    Args:
        root: The copy (a change to one of its protected paths is refused).
        installed: The modules installed for its test command, shared by the copies of a
            round; None: listed for this copy alone.
    """

    def __init__(self, root: Path, installed: InstalledModules | None = None) -> None:
        self.root = root
        self.applied = 0
        """Edits written to the copy (a file written back with its own text makes none)."""
        self.new_modules: dict[str, Path] = {}
        """Root modules the edits added, by name: the file or package folder (resolved)."""
        self._installed = installed if installed is not None else InstalledModules(root)

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        """No editor buffer: tools read the copy's disk."""
        return None

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Write ``edit`` in the copy, as the server writes for an editor that cannot."""
        added = {}
        for path in touched_paths(edit):
            reason = protected_reason(self.root, path)
            if reason is not None:
                return EditOutcome(
                    applied=False,
                    reason=f"it is a protected file ({reason}); not tried on a copy",
                    refused_by="cadenza",
                )
            if self._judges(path):
                return EditOutcome(
                    applied=False,
                    reason="it changes the tests or how they run; not tried on a copy",
                    refused_by="cadenza",
                )
            module = self._new_module(path)
            if module is not None:  # a package's own files are its folder's
                where = path.resolve()
                added[module] = where.parent if where.name == "__init__.py" else where
        outcome = await anyio.to_thread.run_sync(apply_on_disk, edit)
        self.applied += outcome.applied
        if outcome.applied:
            self.new_modules.update(added)
        return outcome

    def unnamed_modules(self) -> list[str]:
        """The added root modules no other Python file of the copy uses.

        A use is an import of the module (``import NAME``, ``from NAME import ...``) or a
        string that names it (``"NAME"``, ``"NAME.py"``: ``importlib``, a script the tests
        run); a word in prose (a README's "works under trio") is none. Blocks on the disk:
        run it in a worker thread. Files over ``MAX_NAMING_BYTES`` or that do not parse are
        not read; neither are the dependency folders linked into the copy.
        """
        left = dict(self.new_modules)
        folders = [self.root]
        while folders and left:
            with os.scandir(folders.pop()) as listing:
                entries = [e for e in listing if not e.is_symlink()]
            for entry in entries:
                if entry.is_dir():
                    if entry.name not in SKIP_DIRS:
                        folders.append(Path(entry.path))
                    continue
                if not entry.name.endswith((".py", ".pyi")):
                    continue
                path = Path(entry.path).resolve()
                used = _used_names(path)
                for module, defined in list(left.items()):
                    if module in used and not path.is_relative_to(defined):
                        del left[module]
        return sorted(left)

    def _new_module(self, path: Path) -> str | None:
        """The root module writing ``path`` would add to the copy, if any."""
        root = self.root.resolve()
        try:
            resolved = path.resolve(strict=False)
        except (RuntimeError, OSError):
            return None
        if not resolved.is_relative_to(root) or resolved.exists():
            return None
        return root_module(resolved.relative_to(root))

    def _judges(self, path: Path) -> bool:
        """Whether ``path`` (resolved, as a link to it would write it) is a test or runs them.

        A new module at the root named like an installed one counts too: the test run would
        import it instead (a pytest plugin, a plugin's requirement).
        """
        root = self.root.resolve()
        try:
            resolved = path.resolve(strict=False)
        except (RuntimeError, OSError):  # a link loop: nothing can be written there anyway
            return False
        if resolved.is_relative_to(root) and is_test_file(resolved.relative_to(root)):
            return True
        return self._new_module(path) in self._installed.names()

    async def ask_user(self, question: str) -> str | None:
        """Nobody to ask in a trial."""
        return None

    def code_intel(self) -> CodeIntel | None:
        """No language server in a trial."""
        return None


def copy_workspace(root: Path, dest: Path) -> None:
    """Copy ``root``'s files into the empty folder ``dest`` (see the module docstring).

    Symbolic links are copied as links. A walk without recursion (a repository may nest
    folders deeper than Python's recursion limit). Blocks on the disk: run it in a worker
    thread.

    Raises:
        TooLarge: Over ``MAX_FILES`` or ``MAX_BYTES``.
        OSError: A file or folder could not be read, or the copy written.
    """
    files = size = 0
    folders = [Path()]
    while folders:
        relative = folders.pop()
        with os.scandir(root / relative) as listing:
            entries = list(listing)
        for entry in entries:
            path, target = Path(entry.path), dest / relative / entry.name
            if _is_dir(entry):  # a link to a folder too, as os.walk lists it
                if entry.name in LINKED_DIRS or (path / VENV_MARKER).is_file():
                    target.symlink_to(path, target_is_directory=True)
                elif entry.name in SKIP_DIRS:
                    continue
                elif entry.is_symlink():
                    target.symlink_to(os.readlink(path))
                else:
                    files += 1
                    _bound(files, size)
                    target.mkdir()
                    folders.append(relative / entry.name)
                continue
            status = entry.stat(follow_symlinks=False)
            if not (stat.S_ISREG(status.st_mode) or stat.S_ISLNK(status.st_mode)):
                continue  # a FIFO, a socket or a device: never read
            files += 1
            size += status.st_size
            _bound(files, size)
            shutil.copy2(path, target, follow_symlinks=False)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` leads to a folder (a link loop does not)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _bound(files: int, size: int) -> None:
    if files > MAX_FILES or size > MAX_BYTES:
        raise TooLarge(f"more than {MAX_FILES} files or {MAX_BYTES // 1_000_000} MB")


def scratch_context(
    ctx: ToolContext, rt: Runtime, copy: Path, installed: InstalledModules
) -> ToolContext:
    """The tools' context in ``copy``: the session's own settings, the copy's files.

    ``installed`` is the round's listing of installed modules (``InstalledModules``).
    """
    shown = {
        copy / p.relative_to(rt.root): known
        for p, known in rt.shown.items()
        if p.is_relative_to(rt.root)
    }
    return replace(
        ctx,
        root=copy,
        host=ScratchHost(copy, installed),
        shown=shown if ctx.shown is not None else None,
        syntax_warned=set(),
        intel=None,
    )


async def make_changes(rt: Runtime, ctx: ToolContext, calls: list[ToolCall]) -> str:
    """Make the file changes among ``calls`` in the copy ``ctx`` works in, in order.

    Returns:
        "" when every change was made, else the first one's error.
    """
    for call in calls:
        if call.error is not None:  # a block that could not be read: never run
            return f"{call.name}: {call.error}"
        prepared = prepare(call, rt.tools)
        if not isinstance(prepared, ToolResult):
            result = await run(prepared, ctx)
        else:
            result = prepared
        if result.is_error:
            return f"{call.name}: {result.content}"
    return ""


def file_changes(rt: Runtime, calls: list[ToolCall]) -> list[ToolCall]:
    """The calls of a reply that change files (the tools the trial can make in a copy)."""
    return [c for c in calls if isinstance(rt.tools.get(c.name), FileChangeTool)]


async def run_suite(
    ctx: ToolContext, rt: Runtime, suite: SuiteCommand, timeout_s: float
) -> tuple[int | None, int | None]:
    """Run ``suite`` in the copy ``ctx`` works in: (tests passed, tests counted).

    A run that could not start, or whose counts are unknown, passed nothing that is known:
    ``(0, None)`` for a failed run (a file that does not even import fails here; so does a
    run whose output pytest's report contradicts), ``(None, None)`` when the command could not
    judge (a runner missing). The counts are pytest's report's when it was asked for.
    """
    with report_file(suite.junit) as report:
        command = suite.command if report is None else report.command(suite.command)
        arguments = json.dumps({"command": command, "timeout_s": timeout_s})
        call = ToolCall(id="candidate-tests", name="run_command", arguments=arguments)
        prepared = prepare(call, rt.tools)
        if isinstance(prepared, ToolResult):
            return None, None
        result = await run(prepared, ctx)
        read = None if report is None else await anyio.to_thread.run_sync(report.read)
    ran = judge_output(suite, result, timeout_s, read)
    if ran.status == "skipped":
        return None, None
    counts = ran.counts
    counted = sum(n for what, n in counts.items() if what in COUNTED) or None
    return counts.get("passed", 0), counted


COUNTED = frozenset({"passed", "failed", "error", "errors"})
"""pytest's counts that are tests run (not skipped or deselected ones)."""


def _used_names(path: Path) -> frozenset[str]:
    """The top-level modules ``path`` imports, and the module names its strings hold."""
    try:
        if path.stat().st_size > MAX_NAMING_BYTES:
            return frozenset()
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.partition(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if (whole := _DOTTED.fullmatch(node.value)) is not None:
                names.add(whole[1])
            names.update(_SCRIPT.findall(node.value))
    return frozenset(names)


_DOTTED = re.compile(r"([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*")
"""A string that is a module's dotted name (``importlib.import_module("trio.lowlevel")``)."""
_SCRIPT = re.compile(r"(?:^|[\s/'\"=])([A-Za-z_]\w*)\.py\b")
"""A Python file named in a string (``"python hello.py"``, ``"tools/x.py"``)."""
