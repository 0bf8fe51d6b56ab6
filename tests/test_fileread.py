"""``cadenza.fileread``: hostile files give plain errors, never a hang, a huge read or a crash.

Real files throughout: a FIFO (``os.mkfifo``), a sparse file of 3 GiB (``truncate``), a
symbolic link loop, an unreadable file (tests run as root, for whom permission bits do not
apply: that case runs in a child process as ``nobody``), and a read that really blocks (a
FIFO opened without ``O_NONBLOCK``) for the worker deadline.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cadenza import fileread
from cadenza.fileread import (
    FileReadError,
    FileTooLarge,
    NotRegularFile,
    in_worker,
    is_regular,
    read_regular,
)
from tests.support.deep_tree import deep_folder

GIB = 1 << 30


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.fixture
def sparse(tmp_path: Path) -> Path:
    path = tmp_path / "huge.bin"
    with path.open("wb") as f:
        f.truncate(3 * GIB)  # no blocks written: 3 GiB of size, almost no disk
    return path


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    return tmp_path / "a"


def test_a_fifo_is_not_read_and_does_not_block(fifo: Path) -> None:
    started = time.monotonic()
    with pytest.raises(NotRegularFile) as caught:
        read_regular(fifo)
    assert time.monotonic() - started < 5
    assert caught.value.kind == "FIFO"
    assert str(caught.value) == "pipe is not a regular file (it is a FIFO); it was not read"
    assert not is_regular(fifo)


def test_a_socket_and_a_device_are_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(NotRegularFile, match="it is a socket"):
            read_regular(path)
    finally:
        server.close()
    with pytest.raises(NotRegularFile, match="it is a character device"):
        read_regular(Path("/dev/zero"))  # would never end if it were read
    with pytest.raises(NotRegularFile, match="it is a directory"):
        read_regular(tmp_path)


def test_a_sparse_file_is_refused_by_its_size_before_any_read(
    sparse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting)
    with pytest.raises(FileTooLarge) as caught:
        read_regular(sparse, label="huge.bin")
    assert reads == []  # refused by its stat: not one byte read
    assert caught.value.size == 3 * GIB
    assert str(caught.value) == "huge.bin: file too large (3221 MB; the limit is 32 MB)"


def test_a_prefix_read_of_a_sparse_file_is_bounded(sparse: Path) -> None:
    data = read_regular(sparse, limit=1_000_000, prefix=True)
    assert len(data) == 1_000_000 and set(data) == {0}


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "growing.log"
    path.write_bytes(b"x" * 10)
    real_fstat = os.fstat

    def grown(fd: int) -> os.stat_result:  # the stat said 10 bytes; it has 100 now
        path.write_bytes(b"x" * 100)
        return real_fstat(fd)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fstat", grown)
        with pytest.raises(FileTooLarge):
            read_regular(path, limit=50)


def test_a_file_swapped_between_stat_and_open_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("first\n")
    real_open = os.open

    def swapping(target: object, flags: int, *args: object, **kwargs: object) -> int:
        os.replace(tmp_path / "other.txt", path)  # another inode where the stat looked
        return real_open(target, flags, *args, **kwargs)  # type: ignore[arg-type]

    (tmp_path / "other.txt").write_text("second\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", swapping)
        with pytest.raises(FileReadError, match="replaced while being opened"):
            read_regular(path)


def test_a_fifo_swapped_in_after_the_stat_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("text\n")
    real_open = os.open

    def swapping(target: object, flags: int, *args: object, **kwargs: object) -> int:
        path.unlink()
        os.mkfifo(path)  # O_NONBLOCK: opening it for reading returns at once
        return real_open(target, flags, *args, **kwargs)  # type: ignore[arg-type]

    started = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", swapping)
        with pytest.raises(NotRegularFile, match="FIFO"):
            read_regular(path)
    assert time.monotonic() - started < 5


def test_a_symbolic_link_loop_is_a_plain_error(loop: Path) -> None:
    with pytest.raises(FileReadError) as caught:
        read_regular(loop)
    assert str(caught.value) == "cannot read a: it is a symbolic link loop"
    assert not is_regular(loop)


def test_a_link_is_refused_without_following(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("t\n")
    os.symlink("target.txt", tmp_path / "link.txt")
    assert read_regular(tmp_path / "link.txt") == b"t\n"
    with pytest.raises(FileReadError):
        read_regular(tmp_path / "link.txt", follow_symlinks=False)


def test_missing_files_and_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(FileReadError, match="file not found: nope"):
        read_regular(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileReadError, match="file not found"):
        read_regular(tmp_path / "file" / "under")


@pytest.fixture
def unreadable() -> Iterator[Path]:
    # Not under tmp_path: pytest makes it 0700, which `nobody` could not even enter.
    folder = Path(tempfile.mkdtemp(prefix="cadenza-unreadable-"))
    folder.chmod(0o755)
    path = folder / "secret.txt"
    path.write_text("no\n")
    path.chmod(0o000)
    try:
        yield path
    finally:
        path.unlink()
        folder.rmdir()


def _read_as_nobody(path: Path) -> str:
    """``read_regular(path)``'s outcome in a forked child that runs as ``nobody``.

    Root reads any file whatever its mode, so the permission check needs another user; the
    child is forked (the interpreter's own folder may not be open to ``nobody``).
    """
    out, into = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to nobody, read, report, exit at once
        try:
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            try:
                read_regular(path)
                said = "READ"
            except FileReadError as exc:
                said = f"ERROR {exc}"
            os.write(into, said.encode())
        finally:
            os._exit(0)
    os.close(into)
    with os.fdopen(out, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    return said


def test_an_unreadable_file_is_a_plain_error(unreadable: Path) -> None:
    if os.geteuid() == 0:
        said = _read_as_nobody(unreadable)
    else:
        try:
            read_regular(unreadable)
            said = "READ"
        except FileReadError as exc:
            said = f"ERROR {exc}"
    assert said == "ERROR cannot read secret.txt: permission denied"


async def test_in_worker_gives_up_a_read_that_blocks_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    monkeypatch.setattr(fileread, "READ_DEADLINE_S", 1.0)

    def blocking_read() -> bytes:  # what a naive reader does: waits for a writer forever
        with open(path, "rb") as f:
            return f.read()

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.monotonic()
    try:
        with pytest.raises(FileReadError, match="took longer than 1 s; it was given up"):
            await in_worker(blocking_read)
    finally:
        task.cancel()
        # Release the abandoned thread: a writer lets its open and read finish.
        threading.Thread(target=lambda: path.write_bytes(b"end"), daemon=True).start()
    elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 10
    assert ticks >= 5  # the loop ran other work all along


async def test_in_worker_passes_results_and_errors_through(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    assert await in_worker(read_regular, tmp_path / "a.txt") == b"hello\n"
    with pytest.raises(FileReadError, match="file not found"):
        await in_worker(read_regular, tmp_path / "missing")


def test_megabytes() -> None:
    assert fileread.megabytes(3 * GIB) == "3221"
    assert fileread.megabytes(32_000_000) == "32"
    assert fileread.megabytes(2_500_000) == "2.5"
    assert fileread.megabytes(2_000_000) == "2"


def test_walk_lists_as_os_walk_does(tmp_path: Path) -> None:
    for folder in ("a/b", "a/c", "d", "skip/me"):
        (tmp_path / folder).mkdir(parents=True)
    for file in ("top.txt", "a/one.txt", "a/b/two.txt", "a/c/three.txt", "skip/me/x.txt"):
        (tmp_path / file).write_text("x")
    os.symlink("a", tmp_path / "link-to-a")  # listed as a folder, never entered
    os.symlink("nowhere", tmp_path / "dangling")
    os.mkfifo(tmp_path / "d" / "pipe")

    def listing(walker: Iterator[tuple[str, list[str], list[str]]]) -> list[tuple[str, ...]]:
        out = []
        for folder, dirnames, filenames in walker:
            dirnames[:] = sorted(d for d in dirnames if d != "skip")
            out.append((folder, *dirnames, "|", *sorted(filenames)))
        return out

    assert listing(fileread.walk(tmp_path)) == listing(os.walk(tmp_path))


def test_walk_goes_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    with deep_folder(tmp_path) as deep:
        Path(deep, "deep.txt").write_text("x")
        found = [os.path.join(f, n) for f, _, names in fileread.walk(tmp_path) for n in names]
        assert found == [os.path.join(deep, "deep.txt")]
