"""Who may write in a workspace while a command runs: nobody else. One lock per workspace.

A session's changes are what *it* wrote: its edits, recorded exactly as they are delivered
(``host.edits``), and what its own commands changed, found by comparing the workspace before
and after each command (``host.command_changes``). That comparison cannot tell who wrote a
file inside its window, so another session must not write there while the window is open:

- a command holds the workspace's lock *exclusively* from the note taken before it to the
  comparison after it (two sessions' commands therefore run one after the other too: each
  would see the other's changes);
- an edit call, a review's undo and ``cadenza undo`` hold it *shared*: edits of several
  sessions go on side by side (each is recorded exactly), but never inside another
  session's command. The edit tool reads its file under the lock, so a command that changed
  the file meanwhile makes the edit stale (refused), never silently merged.

Recording each session's writes in a shared journal and crediting a command only with the
changes no other session claimed was the alternative; it is not correct: a file two sessions
change in one window cannot be split between them, and a write in flight when the command's
note is taken belongs to neither side. Serializing the windows makes every change in a
command's window its own by construction.

The lock is an advisory ``flock`` on ``<user state dir>/workspaces/<key>.lock``. The key is
the git work tree the workspace is in (two sessions on a repository and on one of its folders
share it), else the folder itself. Each acquisition opens its own descriptor, so sessions of
one process exclude each other as sessions of two processes do (two editor windows, two
``cadenza run``); the descriptor is not inherited by commands, and the OS drops the lock
when its holder dies. The exclusive holder writes who it is (session, process, command) into
the file, so a waiter can say whom it waits for. Where ``fcntl`` does not exist (Windows)
nothing is locked.

Limits: only Cadenza sessions take the lock. The person saving a file in the editor, a
program in a terminal, or an editor that saves the agent's edit from its buffer later can
still write inside a command's window; such a change is counted as the command's (its undo
then refuses the file once it changes again). Two sessions on nested folders outside any
git work tree do not share a lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import platformdirs

from cadenza.secrets import redact

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

WAIT_S = 900.0
"""Seconds a command or an edit waits for the workspace at most: longer than the longest
command (``tools.shell.MAX_TIMEOUT_S`` and its grace) and the comparisons around it."""
POLL_S = 0.05
"""Seconds between two attempts while another session holds the lock."""
COMMAND_CHARS = 80
"""Characters of the holder's command kept for a waiter's message."""


def locks_dir() -> Path:
    """``<user state dir>/workspaces``: where the workspaces' lock files live."""
    return Path(platformdirs.user_state_dir("cadenza")) / "workspaces"


def lock_key(root: Path) -> str:
    """The lock file's name for the workspace ``root``: its git work tree's, else its own.

    A ``.git`` entry (a folder, or a worktree's file) marks a work tree; nothing is run.
    """
    folder = root.resolve()
    anchor = folder
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            anchor = candidate
            break
    return hashlib.sha256(os.fsencode(anchor)).hexdigest()[:32] + ".lock"


class WorkspaceBusy(Exception):
    """The workspace stayed locked by another session for ``WAIT_S``; the message says by whom."""


@dataclass(frozen=True, kw_only=True)
class Holder:
    """The session holding the lock exclusively (what its file says)."""

    session_id: str
    pid: int
    command: str

    def describe(self) -> str:
        """``session abc (process 123) is running `make test``` (keys redacted, then cut)."""
        lines = redact(self.command).strip().splitlines() or [""]
        command = lines[0][:COMMAND_CHARS]
        if len(lines) > 1 or len(lines[0]) > COMMAND_CHARS:
            command += "…"
        return f"session {self.session_id} (process {self.pid}) is running `{command}`"


def read_holder(path: Path) -> Holder | None:
    """The exclusive holder named in the lock file ``path``, if it names a live process."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8") or "null")
        holder = Holder(
            session_id=str(raw["sessionId"]), pid=int(raw["pid"]), command=str(raw["command"])
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return None  # a holder that died without clearing the file
    except PermissionError:
        pass
    return holder


class WorkspaceLock:
    """The lock of one workspace, as one session takes it (see the module docstring).

    Args:
        root: The workspace folder.
        session_id: The session taking it (named to whoever waits for it).
        directory: Where lock files live (default ``locks_dir()``).
        wait_s: Seconds to wait for it at most.
    """

    def __init__(
        self,
        root: Path,
        *,
        session_id: str,
        directory: Path | None = None,
        wait_s: float = WAIT_S,
    ) -> None:
        self.path = (directory or locks_dir()) / lock_key(root)
        self.session_id = session_id
        self.wait_s = wait_s

    async def acquire(
        self,
        *,
        command: str | None,
        on_wait: Callable[[str], None] | None = None,
    ) -> HeldLock:
        """Take the lock: exclusively for ``command``, shared for an edit (``command`` None).

        Args:
            command: The command about to run (exclusive), or None (an edit: shared).
            on_wait: Told once, with whom it waits for, when another session holds it.

        Raises:
            WorkspaceBusy: Another session held it for ``wait_s`` seconds.
        """
        if fcntl is None:  # pragma: no cover - not POSIX
            return HeldLock(None, exclusive=False)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            log.warning("the workspace lock %s cannot be opened: %s", self.path, exc)
            return HeldLock(None, exclusive=False)
        mode = fcntl.LOCK_EX if command is not None else fcntl.LOCK_SH
        deadline = time.monotonic() + self.wait_s
        told = False
        try:
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not told and on_wait is not None:
                        on_wait(self._waiting_for())
                        told = True
                    if time.monotonic() >= deadline:
                        raise WorkspaceBusy(
                            f"the workspace stayed busy for {self.wait_s:g} s: "
                            f"{self._waiting_for()}"
                        ) from None
                    await anyio.sleep(POLL_S)
        except BaseException:  # busy, or cancelled while waiting
            os.close(fd)
            raise
        held = HeldLock(fd, exclusive=command is not None)
        if command is not None:
            held.name(self.session_id, command)
        return held

    def _waiting_for(self) -> str:
        holder = read_holder(self.path)
        if holder is None:
            return "another Cadenza session is changing files in this workspace"
        return holder.describe()

    @contextlib.asynccontextmanager
    async def editing(self, on_wait: Callable[[str], None] | None = None) -> AsyncIterator[None]:
        """Hold the lock shared for the body (an edit, an undo).

        Raises:
            WorkspaceBusy: Another session held it for ``wait_s`` seconds.
        """
        held = await self.acquire(command=None, on_wait=on_wait)
        try:
            yield
        finally:
            held.release()


class HeldLock:
    """A held workspace lock; ``release`` drops it (idempotent)."""

    def __init__(self, fd: int | None, *, exclusive: bool) -> None:
        self._fd = fd
        self._exclusive = exclusive

    def name(self, session_id: str, command: str) -> None:
        """Write who holds it (exclusive holders only), for whoever waits."""
        if self._fd is None:
            return
        record = {"sessionId": session_id, "pid": os.getpid(), "command": command}
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, json.dumps(record).encode(), 0)
        except OSError as exc:
            log.warning("the workspace lock cannot name its holder: %s", exc)

    def release(self) -> None:
        """Drop the lock; an exclusive holder clears its name first."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        if self._exclusive:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
        os.close(fd)  # closing the descriptor releases the flock
