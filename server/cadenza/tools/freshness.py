"""Freshness stamps: what a read-only tool read, as it was, so a remembered answer can be checked.

A cached ``read_file``, ``list_files`` or ``search`` answer is stale when anything it read has
changed since: an edit by the agent, a command it ran, the person typing in an open buffer,
another process writing a file. The session sees only some of these changes, so instead of
being told about them the cache asks each entry's stamp whether what it read is still the same
(``ReadStamp.fresh``). A stamp is a cheap probe of the inputs, taken before the tool reads them
(a change during the read then shows up as a later difference: a miss, never a stale hit):

- a file: the open buffer's version and text hash, else ``(mtime_ns, ctime_ns, size, inode,
  device)`` on disk; a file whose timestamps are within ``RACY_NS`` of the probe may still
  change without a new timestamp (coarse file system clocks), so its content hash is added
  (git's "racily clean" entries);
- a folder: the names (and symlink targets) of every entry the tools walk, and for ``search``
  each file's state as above. Probing costs a walk and, for ``search``, a ``stat`` per file:
  less than the tool itself, which walks the same tree and resolves or reads each file.

A probe that cannot vouch for what it read (a racy file over ``MAX_HASH_BYTES``) returns a
value equal to nothing, so its entry is never a hit.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from cadenza.fileread import read_regular
from cadenza.tools.host import ToolHost

RACY_NS = 2_000_000_000
"""A file modified this recently (ns) may change again within the same timestamp tick (FAT
has 2 s ticks, most Linux file systems one scheduler tick): its content is hashed too."""

MAX_HASH_BYTES = 16_000_000
"""Racy files larger than this are not hashed: their stamp never vouches for them."""

Probe = Callable[[], Hashable]


@dataclass(frozen=True, kw_only=True)
class ReadStamp:
    """What a read-only call read, as it was when it read it.

    Attributes:
        probe: Computes the state of the same inputs now (no side effects, no exceptions).
        state: The probe's value when the call read its inputs.
    """

    probe: Probe = field(repr=False)
    state: Hashable

    @classmethod
    def take(cls, probe: Probe) -> ReadStamp:
        """Probe now: the stamp of a read about to happen."""
        return cls(probe=probe, state=probe())

    def fresh(self) -> bool:
        """True when the inputs are unchanged, so the answer read then is the answer now."""
        return self.probe() == self.state

    def matches(self, now: ReadStamp) -> bool:
        """True when ``now`` (a stamp of the same inputs taken later) finds them unchanged.

        The same test as ``fresh`` without probing again: a call takes its stamp once and
        the stuck detector, the cache lookup and the tool all use it.
        """
        return now.state == self.state


@runtime_checkable
class StampedRead(Protocol):
    """A read tool that can read with a stamp taken before (``ReadStamp.take`` of its probe).

    The stamp must have been taken before the read, by the tool's own ``stamp``: a change
    after it then shows up as a later difference (a miss), never as a stale hit.
    """

    async def read(self, args: Any, ctx: Any, stamp: ReadStamp) -> Any:
        """Read, returning a ``ToolResult`` that carries ``stamp``."""


class _Unverifiable:
    """A state equal to nothing (not even itself): its entry is never fresh."""

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)


def _content_hash(path: Path, size: int) -> bytes | None:
    """The file's content hash; None when it is too large to hash or cannot be read."""
    if size > MAX_HASH_BYTES:
        return None
    try:
        return hashlib.blake2b(read_regular(path, limit=MAX_HASH_BYTES), digest_size=16).digest()
    except OSError:
        return None


def _racy(st: os.stat_result, now_ns: int) -> bool:
    """Whether the regular file may still change without new timestamps (see ``RACY_NS``).

    Only regular files are ever hashed: a FIFO's or a device's "content" is not a state (and
    reading it could block).
    """
    return stat.S_ISREG(st.st_mode) and now_ns - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS


def disk_state(path: Path, now_ns: int | None = None) -> Hashable:
    """A file's state on disk: stat fields, plus its content hash while its timestamps are racy.

    Args:
        path: The file.
        now_ns: The probe's clock (``time.time_ns()``); taken here when None.
    """
    try:
        st = path.stat()
    except OSError:
        return ("missing",)
    state: tuple[Hashable, ...] = (
        "disk",
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_size,
        st.st_ino,
        st.st_dev,
    )
    if _racy(st, time.time_ns() if now_ns is None else now_ns):
        content = _content_hash(path, st.st_size)
        state += (_Unverifiable() if content is None else content,)
    return state


def file_state(host: ToolHost, path: Path, now_ns: int | None = None) -> Hashable:
    """A file's state as the editor shows it: the open buffer when there is one, else the disk.

    Args:
        host: The editor (its open buffers).
        path: The resolved path.
        now_ns: The probe's clock, shared by the files of one walk.
    """
    snapshot = host.open_document(path)
    if snapshot is not None:
        return ("buffer", snapshot.version, len(snapshot.text), hash(snapshot.text))
    return disk_state(path, now_ns)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows symlinks, as os.walk sorts entries
    except OSError:
        return False


def _link(entry: os.DirEntry[str]) -> bytes:
    if not entry.is_symlink():
        return b""
    try:
        return b"->" + os.fsencode(os.readlink(entry.path))
    except OSError:
        return b"->?"


def _walked_file(host: ToolHost, entry: os.DirEntry[str], now_ns: int) -> bytes | None:
    """A walked file's ``file_state`` as bytes for a digest; None when it cannot be vouched for.

    The same fields as ``file_state``, packed without building tuples: a folder of thousands
    of files is probed on every cache lookup of a search.
    """
    path = Path(entry.path)
    snapshot = host.open_document(path)
    if snapshot is not None:
        version = -1 if snapshot.version is None else snapshot.version
        return b"B%d,%d,%d" % (version, len(snapshot.text), hash(snapshot.text))
    try:
        st = entry.stat()
    except OSError:
        return b"M"
    fields = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev)
    head = b"S%d,%d,%d,%d,%d" % fields
    if not _racy(st, now_ns):
        return head
    content = _content_hash(path, st.st_size)
    return None if content is None else head + content


def tree_state(host: ToolHost, folder: Path, *, skip: frozenset[str], contents: bool) -> Hashable:
    """The state of the files under ``folder`` as the read tools walk them.

    Mirrors ``os.walk`` without following symlinked folders and without the folders named in
    ``skip``: the names of all entries (with symlink targets), and with ``contents`` each
    file's state as ``file_state`` has it (for ``search``, whose answer depends on the texts).

    Returns:
        A 16-byte digest, or a value equal to nothing when a racy file cannot be hashed.
    """
    digest = hashlib.blake2b(digest_size=16)
    now = time.time_ns()
    stack = [folder]
    while stack:
        current = stack.pop()
        digest.update(b"\0D" + os.fsencode(current))
        try:
            with os.scandir(current) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            digest.update(b"?")
            continue
        for entry in entries:
            is_dir = _is_dir(entry)
            if is_dir and entry.name in skip:
                continue
            digest.update(b"\0" + (b"d" if is_dir else b"f") + os.fsencode(entry.name))
            digest.update(_link(entry))
            if is_dir:
                if not entry.is_symlink():
                    stack.append(Path(entry.path))
            elif contents:
                state = _walked_file(host, entry, now)
                if state is None:
                    return _Unverifiable()
                digest.update(state)
    return digest.digest()
