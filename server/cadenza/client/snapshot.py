"""What a run's session changed on disk: its edits, and the files its commands changed.

The client knows the edits it writes itself (``workspace/applyEdit``) exactly, but a command the
agent runs (``run_command``: a formatter, a code generator, ``git mv``) changes files the client
never sees. The server names them (a diff of the command's call), and :class:`DiskSnapshot`
gives their texts: it notes the workspace when a run begins and compares at its end:

- in a git work tree, ``git status`` names the files that differ from the commit or are
  untracked and not ignored. Files already dirty at the start have their bytes kept; the
  others start as the starting commit's blob. If the agent commits, the files of its commits
  are candidates too;
- elsewhere, every file outside ``SKIP_DIRS`` (the folders the agent's ``list_files`` skips
  too: version control, dependencies, caches) is noted by its stat, with its bytes kept.

Only the files the session changed are compared (``changes(only=...)``): another session, or
the person, may write in the same workspace during the run, and those writes are not this
run's. (The server keeps another Cadenza session's writes out of the window of each of this
session's commands, so what a command changed is the session's own.)

Both are bounded: at most ``MAX_FILES`` files, ``MAX_FILE_BYTES`` per kept file and
``MAX_KEPT_BYTES`` in all. A file past a bound is still noticed by its stat and shown as a
one-line note instead of a line diff; a binary file likewise. :func:`reconcile` merges the
result with the edits the client wrote (their renames are kept).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from cadenza.client.edits import ChangeKind, FileChange
from cadenza.fileread import read_regular, walk
from cadenza.gitcmd import run_git
from cadenza.textio import UndecodableError, decode_bytes

MAX_FILES = 20_000
MAX_FILE_BYTES = 1_000_000
MAX_KEPT_BYTES = 64_000_000
GIT_TIMEOUT_S = 30.0
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"}
    | {".ruff_cache", ".pytest_cache", ".cadenza"}
)

StatKey = tuple[int, int]
"""``(mtime_ns, size)``: a file whose stat is unchanged is not read again."""


@dataclass(frozen=True)
class _Seen:
    stat: StatKey
    data: bytes | None
    """The bytes (None: past a bound; compared by stat only)."""


@dataclass(kw_only=True)
class _Budget:
    files: int = MAX_FILES
    kept: int = MAX_KEPT_BYTES

    def keep(self, size: int) -> bool:
        if size > MAX_FILE_BYTES or size > self.kept:
            return False
        self.kept -= size
        return True


@dataclass(kw_only=True)
class DiskSnapshot:
    """The workspace as a run began (see the module docstring); :meth:`take` it."""

    root: Path
    head: str | None = None
    """In a git work tree: the commit checked out at the start ("" before the first commit)."""
    seen: dict[str, _Seen] = field(default_factory=dict)
    """Files noted at the start (git: only the dirty ones), by path relative to ``root``."""

    @classmethod
    def take(cls, root: Path) -> DiskSnapshot:
        """Note the workspace ``root`` now (blocking: run it in a thread)."""
        root = root.resolve()
        head = _git_head(root)
        if head is not None:
            dirty = _git_dirty(root)
            return cls(root=root, head=head, seen=_note(root, dirty if dirty is not None else ()))
        return cls(root=root, seen=_note(root, _walk(root)))

    def changes(self, only: Iterable[str] | None = None) -> tuple[FileChange, ...]:
        """Every file that differs from the start, sorted by path (blocking).

        Args:
            only: Compare only these paths (relative to ``root``); None: every candidate.
        """
        if only is not None:
            candidates = set(only)
        elif self.head is None:
            candidates = set(self.seen) | set(_walk(self.root))
        else:
            candidates = set(self.seen) | set(_git_dirty(self.root) or ())
            candidates |= _git_committed_since(self.root, self.head)
        changes = (self._change(path) for path in sorted(candidates)[:MAX_FILES])
        return tuple(change for change in changes if change is not None)

    def _change(self, path: str) -> FileChange | None:
        now = _stat(self.root / path)
        seen = self.seen.get(path)
        if seen is not None and now is not None and seen.stat == now:
            return None
        if seen is None and self.head is not None:
            seen = _git_blob(self.root, self.head, path)
        before = _text(seen.data, seen.stat[1]) if seen is not None else None
        after_data = _read(self.root / path) if now is not None else None
        if seen is not None and seen.data is not None and seen.data == after_data:
            return None
        after = _text(after_data, now[1]) if now is not None else None
        if before == after:
            return None
        kind: ChangeKind = "modified"
        if before is None:
            kind = "created"
        elif after is None:
            kind = "deleted"
        return FileChange(path=path, kind=kind, before=before, after=after)


def reconcile(
    root: Path,
    edits: Iterable[FileChange],
    disk: Iterable[FileChange],
    rewritten: Collection[str] | None = None,
) -> tuple[FileChange, ...]:
    """The run's changes: the client's own edits, corrected by the disk, then the others.

    An edit stays as it is (a rename included). A file one of the session's commands changed
    too (``rewritten``, relative paths; None: any file) ends as the disk has it, and is
    dropped when that is its start. Another writer's later change to an edited file is not
    the session's, so it is not shown as the edit's.
    """
    on_disk = {change.path: change for change in disk}
    merged: list[FileChange] = []
    for edit in edits:
        now = on_disk.pop(edit.path, None)
        source = on_disk.get(edit.old_path or "") if edit.kind == "renamed" else None
        if source is not None and source.after is None:
            del on_disk[source.path]
        if rewritten is not None and edit.path not in rewritten:
            merged.append(edit)
            continue
        after = now.after if now is not None else _current_text(root / edit.path)
        if after == edit.before and edit.kind != "renamed":
            continue
        if after != edit.after:
            edit = replace(edit, after=after, kind="deleted" if after is None else edit.kind)
        merged.append(edit)
    return (*merged, *on_disk.values())


def _git(root: Path, *args: str) -> bytes | None:
    """``git ARGS`` in ``root``: its stdout, or None when git fails or is missing.

    Run as a library user (``gitcmd``): none of the repository's own programs (fsmonitor,
    filters, hooks) runs, and submodules are not entered.
    """
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        done = run_git(root, *args, timeout=GIT_TIMEOUT_S, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_head(root: Path) -> str | None:
    """The commit of the git work tree ``root`` is in ("" before the first); None: not git."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != b"true":
        return None
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    return head.decode().strip() if head else ""


def _prefix(root: Path) -> str:
    prefix = _git(root, "rev-parse", "--show-prefix")
    return prefix.decode("utf-8", "surrogateescape").strip() if prefix else ""


def _git_paths(root: Path, raw: bytes, *, status: bool) -> set[str]:
    """Paths of NUL-separated git output, relative to ``root`` (git gives them repo-relative)."""
    prefix = _prefix(root)
    paths = set()
    for entry in raw.split(b"\0"):
        name = entry[3:] if status else entry
        path = name.decode("utf-8", "surrogateescape")
        if path and path.startswith(prefix) and not path.endswith("/"):
            paths.add(path.removeprefix(prefix))
    return paths


def _git_dirty(root: Path) -> set[str] | None:
    """Files under ``root`` that differ from ``HEAD`` or are untracked and not ignored."""
    raw = _git(
        root,
        *("status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"),
        *("--ignore-submodules=all", "."),
    )
    return None if raw is None else _git_paths(root, raw, status=True)


def _git_committed_since(root: Path, head: str) -> set[str]:
    """Files under ``root`` that commits made since ``head`` changed."""
    now = _git_head(root)
    if not head or not now or now == head:
        return set()
    raw = _git(root, "diff", "--name-only", "-z", "--no-renames", head, now, "--", ".")
    return set() if raw is None else _git_paths(root, raw, status=False)


def _git_blob(root: Path, head: str, path: str) -> _Seen | None:
    """The file as the starting commit has it (None: not in it)."""
    if not head:
        return None
    size = _git(root, "cat-file", "-s", f"{head}:./{path}")
    if size is None:
        return None
    length = int(size.strip() or 0)
    data = _git(root, "cat-file", "blob", f"{head}:./{path}") if length <= MAX_FILE_BYTES else None
    return _Seen(stat=(-1, length), data=data)


def _walk(root: Path) -> list[str]:
    """Files under ``root`` (``SKIP_DIRS`` left out, symlinks not followed), at most MAX_FILES."""
    names: list[str] = []
    for folder, dirnames, filenames in walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        base = Path(folder).relative_to(root)
        for filename in sorted(filenames):
            if len(names) >= MAX_FILES:
                return names
            names.append((base / filename).as_posix())
    return names


def _note(root: Path, names: Iterable[str]) -> dict[str, _Seen]:
    budget = _Budget()
    seen = {}
    for name in names:
        if budget.files <= 0:
            break
        stat = _stat(root / name)
        if stat is None:
            continue
        budget.files -= 1
        data = _read(root / name) if budget.keep(stat[1]) else None
        seen[name] = _Seen(stat=stat, data=data)
    return seen


def _stat(path: Path) -> StatKey | None:
    """A file's stat key; None when absent or neither a regular file nor a symbolic link.

    A FIFO, a socket or a device is not a file whose change can be shown (and reading a
    FIFO would wait for a writer forever).
    """
    try:
        info = path.lstat()
    except OSError:
        return None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        return None
    return (info.st_mtime_ns, info.st_size)


def _read(path: Path) -> bytes | None:
    """The file's bytes; a symlink's target, as git keeps it (never read through a link).

    None: over ``MAX_FILE_BYTES``, not a regular file, or unreadable (``fileread``).
    """
    try:
        if path.is_symlink():
            return os.fsencode(os.readlink(path))
        return read_regular(path, limit=MAX_FILE_BYTES, follow_symlinks=False)
    except OSError:
        return None


def _text(data: bytes | None, size: int) -> str:
    """A file's text for the diff; a note for a file too large or binary to diff."""
    if data is None:
        return f"(a large file, {size} bytes: not compared line by line)\n"
    try:
        return decode_bytes(data).text
    except UndecodableError:
        return f"(a binary file, {len(data)} bytes)\n"


def _current_text(path: Path) -> str | None:
    stat = _stat(path)
    return None if stat is None else _text(_read(path), stat[1])
