"""Reading files Cadenza did not write: regular files only, every read bounded, off the loop.

The workspace is untrusted input. A FIFO, a socket or a device where a file is expected, a
sparse file of gigabytes, a symbolic link loop, an unreadable file or a file on a stuck
network mount must each give a plain error, never a hang, a huge allocation or a traceback.
So every read of a workspace file goes through ``read_regular``:

- the path is ``stat``-ed first: anything but a regular file is refused (``NotRegularFile``,
  "not a regular file (a FIFO)"), and a file over the caller's limit is refused by its size
  before a byte is read (``FileTooLarge``), or read in its first ``limit`` bytes (``prefix``);
- it is opened with ``O_NONBLOCK`` (opening a FIFO put there meanwhile returns at once instead
  of waiting for a writer), with ``O_NOFOLLOW`` when a link must not be followed, and
  ``fstat``-ed: the descriptor must be the very regular file that was ``stat``-ed;
- at most ``limit + 1`` bytes are read, so a file that grew past the limit since is refused too.

Every failure is a ``FileReadError`` (an ``OSError``) whose message is a sentence for the model
or the person: not found, a directory, permission denied, a symbolic link loop, too large.

``walk`` lists a tree as ``os.walk`` does, without recursion (a deep tree is no error).
``in_worker`` runs blocking file work in a worker thread with a deadline, so the event loop
answers other requests meanwhile, and a read that never returns (a stuck mount) becomes a
``FileReadError`` after the deadline. Its thread cannot be interrupted and is left to finish;
the workers are a pool of their own, so such threads never starve other users of threads.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import os
import stat
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal, TypeVar, TypeVarTuple, Unpack

MAX_TEXT_BYTES = 32_000_000
"""The largest file Cadenza reads whole as text (a tool's read, an edit, a diff)."""

READ_DEADLINE_S = 30.0
"""How long one worker job (a read, a walk) may take before it is given up."""

WORKERS = 8
"""Threads of the file-reading pool: jobs past them wait (within their deadline)."""

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20

FileKind = Literal[
    "directory", "FIFO", "socket", "character device", "block device", "symbolic link", "special"
]


class FileReadError(OSError):
    """A file could not be read; ``str(exc)`` says why in words for the model or person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.strerror = message  # for code that reports ``exc.strerror`` of any OSError

    def __str__(self) -> str:
        return self.message


class NotRegularFile(FileReadError):
    """The path names a directory, FIFO, socket or device, not a regular file.

    Attributes:
        kind: What it is instead.
    """

    def __init__(self, label: str, kind: FileKind) -> None:
        article = "an" if kind[0] in "aeiou" else "a"
        super().__init__(f"{label} is not a regular file (it is {article} {kind}); it was not read")
        self.kind: FileKind = kind


class FileTooLarge(FileReadError):
    """The file is over the reader's limit.

    Attributes:
        size: Its size in bytes (at least ``limit + 1`` when it grew while read).
        limit: The limit in bytes.
    """

    def __init__(self, label: str, size: int, limit: int) -> None:
        super().__init__(
            f"{label}: file too large ({megabytes(size)} MB; the limit is {megabytes(limit)} MB)"
        )
        self.size = size
        self.limit = limit


def megabytes(size: int) -> str:
    """``size`` in MB (10^6 bytes) for messages: ``3221``, ``2.5``, ``0.1``."""
    value = size / 1_000_000
    if value >= 10:
        return f"{value:.0f}"
    return f"{value:.1f}".removesuffix(".0") if value >= 0.1 else f"{value:.2g}"


def _kind(mode: int) -> FileKind:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    return "special"


def os_error(exc: OSError, label: str) -> FileReadError:
    """The ``FileReadError`` for an ``OSError`` met while reading ``label``."""
    if isinstance(exc, FileReadError):
        return exc
    code = exc.errno
    if code == errno.ENOENT:
        return FileReadError(f"file not found: {label}")
    if code == errno.EISDIR:
        return NotRegularFile(label, "directory")
    if code == errno.ELOOP:
        return FileReadError(f"cannot read {label}: it is a symbolic link loop")
    if code in (errno.EACCES, errno.EPERM):
        return FileReadError(f"cannot read {label}: permission denied")
    if code == errno.ENOTDIR:
        return FileReadError(f"file not found: {label} (a part of its path is not a folder)")
    return FileReadError(f"cannot read {label}: {exc.strerror or exc}")


def regular_stat(
    path: Path, label: str | None = None, *, follow_symlinks: bool = True
) -> os.stat_result:
    """``stat`` of ``path``, which must be a regular file (it is not opened).

    Raises:
        FileReadError: Missing, unreadable, a link loop, or not a regular file.
    """
    name = label or path.name
    try:
        info = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise os_error(exc, name) from None
    except ValueError:  # a NUL in the path
        raise FileReadError(f"cannot read {name}: the path is not valid") from None
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(name, _kind(info.st_mode))
    return info


def is_regular(path: Path, *, follow_symlinks: bool = True) -> bool:
    """Whether ``path`` is a regular file now (never raises; a link loop is not)."""
    try:
        return stat.S_ISREG(os.stat(path, follow_symlinks=follow_symlinks).st_mode)
    except (OSError, ValueError):
        return False


def regular_or_absent(path: Path) -> bool:
    """Whether ``path`` is a regular file or nothing at all (never raises).

    What an editor is asked to read (an absent file may be its unsaved buffer): a FIFO or a
    device would hang an editor that simply opens it.
    """
    return is_regular(path) or not os.path.lexists(path)


def read_regular(
    path: Path,
    *,
    limit: int = MAX_TEXT_BYTES,
    label: str | None = None,
    prefix: bool = False,
    follow_symlinks: bool = True,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Args:
        path: The file.
        limit: The most bytes read.
        label: How messages call the file (default: its name).
        prefix: Read the first ``limit`` bytes of a larger file instead of refusing it.
        follow_symlinks: False: a symbolic link at ``path`` itself is refused (``O_NOFOLLOW``).

    Raises:
        FileReadError: Not found, not a regular file (``NotRegularFile``), larger than
            ``limit`` without ``prefix`` (``FileTooLarge``), a link loop, permission denied,
            replaced between ``stat`` and ``open``, or another read error.
    """
    name = label or path.name
    before = regular_stat(path, name, follow_symlinks=follow_symlinks)
    if before.st_size > limit and not prefix:
        raise FileTooLarge(name, before.st_size, limit)
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise os_error(exc, name) from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):
            raise NotRegularFile(name, _kind(now.st_mode))
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise FileReadError(f"cannot read {name}: it was replaced while being opened")
        if now.st_size > limit and not prefix:
            raise FileTooLarge(name, now.st_size, limit)
        data = _read_up_to(fd, limit if prefix else limit + 1)
    except FileReadError:
        raise
    except OSError as exc:
        raise os_error(exc, name) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileTooLarge(name, len(data), limit)
    return data


def _read_up_to(fd: int, most: int) -> bytes:
    """Up to ``most`` bytes from ``fd`` (fewer at the end of the file)."""
    chunks: list[bytes] = []
    left = most
    while left > 0:
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def walk(top: Path | str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` (top-down, links to folders listed but not entered), without recursion.

    ``os.walk`` recurses once per folder level (before Python 3.13), so a workspace nested
    deeper than the interpreter's recursion limit (about a thousand folders, a few kilobytes
    of path) raised ``RecursionError`` out of every walk. The caller may prune ``dirnames``
    in place, as with ``os.walk``; folders that cannot be listed are skipped.

    Yields:
        ``(dirpath, dirnames, filenames)``, in ``os.walk``'s order.
    """
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        links: set[str] = set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(entry.name)
            if is_dir and entry.is_symlink():
                links.add(entry.name)
        yield folder, dirnames, filenames
        stack.extend(os.path.join(folder, name) for name in reversed(dirnames) if name not in links)


_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="cadenza-read")


async def in_worker(
    fn: Callable[[Unpack[_Args]], _T],
    *args: *_Args,
    deadline_s: float | None = None,
) -> _T:
    """``fn(*args)`` in a file-reading worker thread, within a deadline.

    Use it for blocking file work on the event loop's behalf (a read, a walk, a hash). ``fn``
    must not touch state the loop changes (editor buffers are read on the loop, before; only
    ``ToolHost.open_document`` is safe in a worker).

    Args:
        fn: The blocking work.
        args: Its arguments.
        deadline_s: Seconds it may take (default ``READ_DEADLINE_S``).

    Raises:
        FileReadError: The job took longer than the deadline (its thread is left to finish).
        Exception: Whatever ``fn`` raised.
    """
    deadline = READ_DEADLINE_S if deadline_s is None else deadline_s
    job = asyncio.get_running_loop().run_in_executor(_pool(), fn, *args)
    try:
        return await asyncio.wait_for(job, deadline)
    except TimeoutError:
        raise FileReadError(
            f"reading from the disk took longer than {deadline:g} s; it was given up"
        ) from None
