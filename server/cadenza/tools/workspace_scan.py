"""What a command changed in the workspace: its files noted before it ran, compared after.

A command (``run_command``) changes files without saying which, so nothing records a file
before it changes it, as the edit path does. ``scan`` notes the workspace before the command:
every regular file's size and modification time, and the bytes of each text file (no NUL
byte) up to ``ScanLimits.file_bytes``. ``changes`` walks it again afterwards and names the
files created, modified and deleted, with their bytes before and after, so the host can record
each as a checkpointed change (review, undo) like an edit's.

What it leaves out, on purpose:

- the folders no tool looks into (``tools.read.SKIP_DIRS``: version control, dependencies,
  caches, ``.cadenza``) and virtual environments (a folder holding ``pyvenv.cfg``);
- symbolic links, which are never followed, read or written: a link is not a file here, a
  folder reached through a link is not entered, and a file whose path now runs through a link
  (or became one) is reported ``unrecorded`` instead of being read;
- files it could not keep (over the size cap, not text, past the byte budget): a change to one
  is noticed by its size and time and reported ``unrecorded``, never guessed at.

Bounds: past ``ScanLimits.files`` files, or ``ScanLimits.kept_bytes`` bytes of text in all,
``scan`` gives up and returns a sentence saying why (the caller tells the person the command's
changes could not be listed). A change that keeps a file's size and modification time to the
nanosecond is not seen. Everything here blocks on the disk: run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cadenza.tools.read import SKIP_DIRS

VENV_MARKER = "pyvenv.cfg"
"""A folder holding this file is a Python virtual environment (whatever its name)."""


@dataclass(frozen=True, kw_only=True)
class ScanLimits:
    """How much a scan may note.

    Attributes:
        files: Files at most (more: the scan gives up).
        file_bytes: Bytes of one file kept at most (a larger file is noted by size and time).
        kept_bytes: Bytes kept in all (more: the scan gives up).
    """

    files: int = 20_000
    file_bytes: int = 1_000_000
    kept_bytes: int = 64_000_000


@dataclass(frozen=True)
class Seen:
    """One regular file as a scan found it.

    Attributes:
        size: Its size in bytes.
        mtime_ns: Its modification time (nanoseconds).
        data: Its bytes, when kept (None: over the cap, or not text).
    """

    size: int
    mtime_ns: int
    data: bytes | None


@dataclass(kw_only=True)
class WorkspaceScan:
    """The workspace's files at one moment, by ``/``-separated path relative to ``root``."""

    root: Path
    files: dict[str, Seen] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ScannedChange:
    """One file a command changed: its bytes before (None: created) and after (None: deleted)."""

    path: str
    before: bytes | None
    after: bytes | None


@dataclass(kw_only=True)
class ScanDiff:
    """What changed between two scans.

    Attributes:
        changes: The files whose change is known exactly, in path order.
        unrecorded: Files that changed but whose before or after bytes are unknown (too
            large, not text, a link), in path order.
        after: The workspace as it is now (the next command's ``previous``); None when the
            second walk went past the bounds.
    """

    changes: list[ScannedChange] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    after: WorkspaceScan | None = None


class _TooMany(Exception):
    """The walk went past ``ScanLimits.files``."""


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
# O_NONBLOCK: a FIFO put there meanwhile must not block the open.
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


def _open_folder(root: Path, relative: str) -> int:
    """A descriptor of the folder ``root/relative`` ("": the root), never through a link.

    It is opened one folder at a time from the root, each with ``O_NOFOLLOW``.

    Raises:
        OSError: A part of the path is a link (``ELOOP``/``ENOTDIR``) or is missing.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for part in relative.split("/") if relative else []:
        try:
            inner = os.open(part, _DIR, dir_fd=fd)
        finally:
            os.close(fd)
        fd = inner
    return fd


def _is_venv(folder: int, name: str) -> bool:
    try:
        os.stat(f"{name}/{VENV_MARKER}", dir_fd=folder, follow_symlinks=False)
    except OSError:
        return False
    return True


Found = tuple[str, "os.stat_result | None", int, str]
"""A file the walk found: its relative path, its stat (None: a link), and its folder's
descriptor (open while the walk yields it) and name in it."""


def _walk(root: Path, limit: int) -> Iterator[Found]:
    """Every file under ``root`` outside the skipped folders (see ``Found``).

    Each folder is opened by descriptor, never through a link, and its files are read
    relative to it: a folder swapped for a link meanwhile is not entered.

    Raises:
        _TooMany: More than ``limit`` entries.
    """
    count = 0
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            folder = _open_folder(root, prefix.rstrip("/"))
        except OSError:  # vanished, unreadable or a link meanwhile: nothing to note there
            continue
        try:
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda e: e.name)
            for entry in listed:
                count += 1
                if count > limit:
                    raise _TooMany
                relative = f"{prefix}{entry.name}"
                if entry.is_symlink():
                    yield relative, None, folder, entry.name
                elif entry.is_dir(follow_symlinks=False):
                    count -= 1  # folders do not count as files
                    if entry.name not in SKIP_DIRS and not _is_venv(folder, entry.name):
                        stack.append(f"{relative}/")
                elif entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        yield relative, entry.stat(follow_symlinks=False), folder, entry.name
        finally:
            os.close(folder)


def _read_at(folder: int, name: str, size_cap: int) -> bytes | None:
    """The bytes of the regular file ``name`` in ``folder`` (never a link).

    None unless it is text (no NUL byte) of at most ``size_cap`` bytes; None as well when it
    grew while read.
    """
    try:
        fd = os.open(name, _FILE, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > size_cap:
            return None
        want = info.st_size + 1  # one more byte: a file that grew since is not kept
        data = os.read(fd, want)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) == want or b"\x00" in data:
        return None
    return data


def _read(root: Path, relative: str, size_cap: int) -> bytes | None:
    """``_read_at`` for a path relative to ``root``, its folders opened without links."""
    head, _, name = relative.rpartition("/")
    try:
        folder = _open_folder(root, head)
    except OSError:
        return None
    try:
        return _read_at(folder, name, size_cap)
    finally:
        os.close(folder)


def scan(
    root: Path, *, previous: WorkspaceScan | None = None, limits: ScanLimits | None = None
) -> WorkspaceScan | str:
    """Note the workspace ``root`` (absolute, resolved) now.

    Args:
        root: The workspace root.
        previous: An earlier scan: a file whose size and time are unchanged keeps its bytes
            from there instead of being read again.
        limits: The bounds (default ``ScanLimits()``).

    Returns:
        The scan, or why it was given up (a sentence for the person).
    """
    limits = limits or ScanLimits()
    kept = 0
    found = WorkspaceScan(root=root)
    known = previous.files if previous is not None else {}
    try:
        for relative, info, folder, name in _walk(root, limits.files):
            if info is None:
                continue
            old = known.get(relative)
            if old is not None and (old.size, old.mtime_ns) == (info.st_size, info.st_mtime_ns):
                data = old.data
            elif info.st_size <= limits.file_bytes:
                data = _read_at(folder, name, limits.file_bytes)
            else:
                data = None
            kept += len(data) if data is not None else 0
            if kept > limits.kept_bytes:
                return (
                    f"the workspace holds more than {limits.kept_bytes // 1_000_000} MB of "
                    "text, too much to note before every command"
                )
            found.files[relative] = Seen(info.st_size, info.st_mtime_ns, data)
    except _TooMany:
        return (
            f"the workspace has more than {limits.files:,} files, too many to compare before "
            "and after every command"
        )
    return found


def _through_link(root: Path, relative: str) -> bool:
    """Whether the path runs through a symbolic link now (the file itself or a folder)."""
    path = root
    for part in relative.split("/"):
        path = path / part
        if path.is_symlink():
            return True
    return False


def changes(before: WorkspaceScan, limits: ScanLimits | None = None) -> ScanDiff:
    """What changed in ``before.root`` since ``before`` was taken.

    Only files whose size or time changed are read, and only as regular files, never through
    a link. The second walk has the same file bound as the first plus one tenth; past it,
    files are still compared one by one (modified and deleted ones), but files created are not
    looked for. The files read afterwards share one budget of ``ScanLimits.kept_bytes``: a
    changed file past it is ``unrecorded``.
    """
    limits = limits or ScanLimits()
    root = before.root
    budget = [limits.kept_bytes]
    now: dict[str, os.stat_result | None] = {}
    complete = True
    try:
        for relative, info, _folder, _name in _walk(root, limits.files + limits.files // 10):
            now[relative] = info
    except _TooMany:
        complete = False
    diff = ScanDiff()
    after = WorkspaceScan(root=root)
    paths = sorted(set(before.files) | (set(now) if complete else set()))
    for relative in paths:
        old = before.files.get(relative)
        if not complete and relative not in now and not _through_link(root, relative):
            try:  # past the walk's bound: this known file alone
                now[relative] = os.stat(root / relative, follow_symlinks=False)
            except OSError:
                now[relative] = None
        _compare(diff, after, relative, old, now.get(relative), limits, budget)
    diff.after = after if complete else None
    return diff


def _compare(
    diff: ScanDiff,
    after: WorkspaceScan,
    relative: str,
    old: Seen | None,
    info: os.stat_result | None,
    limits: ScanLimits,
    budget: list[int],
) -> None:
    """Add ``relative``'s change (if any) to ``diff`` and its state now to ``after``.

    ``budget[0]``: the bytes that may still be read (lowered by each read).
    """
    root = after.root
    gone = info is None or not stat.S_ISREG(info.st_mode)
    if gone and old is None:
        return  # a link before and after, or nothing
    if gone:
        if _through_link(root, relative) or old is None or old.data is None:
            diff.unrecorded.append(relative)
        else:
            diff.changes.append(ScannedChange(path=relative, before=old.data, after=None))
        return
    assert info is not None
    if old is not None and (old.size, old.mtime_ns) == (info.st_size, info.st_mtime_ns):
        after.files[relative] = old
        return
    cap = min(limits.file_bytes, budget[0])
    data = _read(root, relative, cap) if info.st_size <= cap else None
    budget[0] -= len(data) if data is not None else 0
    after.files[relative] = Seen(info.st_size, info.st_mtime_ns, data)
    if old is not None and old.data is not None and old.data == data:
        return  # touched, not changed
    if data is None or (old is not None and old.data is None):
        diff.unrecorded.append(relative)
        return
    diff.changes.append(
        ScannedChange(path=relative, before=None if old is None else old.data, after=data)
    )
