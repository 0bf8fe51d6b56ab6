"""The files a command changed, recorded in the session's checkpoint like an edit's changes.

An edit tool's change is recorded before it is sent (``host.edits``); a command's cannot be, so
the workspace is noted before each command (``tools.workspace_scan``) and compared once it
ended, however it ended. Each text file created, modified or deleted becomes a checkpoint
record with its state before and after, exactly as an edit leaves one: the turn's review lists
it as hunks (``host.turn_changes``), undoing a hunk or the whole session puts the bytes back,
and the next turn's prompt says which of these changes the person undid.

What cannot be recorded is said in plain words in the checkpoint's ``unlisted`` (the review
shows it): a workspace past the scan's bounds, and files that are not text, too large, or
reached through a symbolic link.

The comparison cannot tell who wrote a file inside its window, so the window is the
session's alone: ``before`` takes the workspace's lock exclusively (``host.workspace_lock``)
and ``after`` drops it, and the session's edit calls hold it shared (``editing``). Another
session's edits and commands wait meanwhile, so they are never counted as this command's.

Limit: the comparison sees the disk only. A file the person saves in the editor while the
command runs is counted as the command's change (the person takes no lock); unsaved typing
in a buffer is not on disk and is never counted.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from functools import partial

import anyio

from cadenza.engine.ports import CommandChange
from cadenza.host.checkpoints import (
    ABSENT,
    CheckpointEntry,
    CheckpointError,
    FileState,
    SessionCheckpoint,
)
from cadenza.host.workspace_lock import HeldLock, WorkspaceBusy, WorkspaceLock
from cadenza.secrets import redact
from cadenza.textio import UndecodableError, decode_bytes
from cadenza.tools.workspace_scan import ScanLimits, ScannedChange, WorkspaceScan, changes, scan

log = logging.getLogger(__name__)

COMMAND_CHARS = 60
"""Characters of a command quoted in a note (its first line)."""
NAMED_FILES = 5
"""Files named in a note at most (then "and N more")."""


def _state(data: bytes | None) -> FileState | None:
    """The checkpoint state of a file's bytes (None: not text)."""
    if data is None:
        return ABSENT
    try:
        return FileState(exists=True, text=decode_bytes(data).text, data=data)
    except UndecodableError:
        return None


def record_changes(
    checkpoint: SessionCheckpoint, found: list[ScannedChange]
) -> tuple[list[CommandChange], list[str]]:
    """Record each change in ``checkpoint`` as the latest turn's (one save).

    A file the session recorded already keeps its state before the session (and before the
    turn, when the turn changed it earlier); its ``after`` becomes the command's.

    Returns:
        The changes recorded, and the paths left out (not text in some encoding).

    Raises:
        CheckpointError: The checkpoint cannot be written.
    """
    recorded: list[CommandChange] = []
    skipped: list[str] = []
    for change in found:
        before, after = _state(change.before), _state(change.after)
        if before is None or after is None:
            skipped.append(change.path)
            continue
        entry = checkpoint.entries.get(change.path)
        if entry is None:
            entry = checkpoint.entries[change.path] = CheckpointEntry(
                path=change.path, before=before
            )
        if entry.turn_before is None:
            entry.turn_before = before
        if after.exists and entry.after is not None:  # a renamed file is still renamed back
            after = replace(after, origin=entry.after.origin)
        entry.after = entry.turn_after = after
        entry.pending = None
        recorded.append(
            CommandChange(
                path=change.path,
                old_text=before.text if before.exists else None,
                new_text=after.text or "",
                deleted=not after.exists,
            )
        )
    if recorded:
        checkpoint.save()
    return recorded, skipped


def _quoted(command: str) -> str:
    lines = redact(command).strip().splitlines() or [""]
    shown = lines[0][:COMMAND_CHARS]
    if len(lines) > 1 or len(lines[0]) > COMMAND_CHARS:
        shown += "…"
    return f"`{shown}`"


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:NAMED_FILES])
    more = len(paths) - NAMED_FILES
    return f"{shown} and {more} more" if more > 0 else shown


def _not_compared_text(commands: list[str], why: str) -> str:
    what = commands[0] if len(commands) == 1 else f"the {len(commands)} commands it ran"
    return f"Not listed for review: what {what} changed ({why})."


class CheckpointedCommands:
    """The ``engine.ports.CommandWatch`` of a session: its commands' changes, checkpointed.

    The note taken after a command is kept for the next one (so it reads only the files whose
    size or time changed): up to ``ScanLimits.kept_bytes`` of text held while the session's
    engine lives (an LSP turn; an ACP session between prompts).

    Args:
        checkpoint: The session's checkpoint (its ``root`` is the workspace, resolved).
        limits: The scan's bounds (default ``ScanLimits()``).
        warn: Told when the checkpoint cannot be written.
        lock: The workspace's lock as this session takes it (None: nothing is locked).
    """

    def __init__(
        self,
        checkpoint: SessionCheckpoint,
        *,
        limits: ScanLimits | None = None,
        warn: Callable[[str], None] | None = None,
        lock: WorkspaceLock | None = None,
    ) -> None:
        self.checkpoint = checkpoint
        self.limits = limits or ScanLimits()
        self.lock = lock
        self._warn = warn or (lambda text: log.warning("%s", text))
        self._command = ""
        self._before: WorkspaceScan | str | None = None
        self._held: HeldLock | None = None
        self._last: WorkspaceScan | None = None
        """The workspace after the previous command: unchanged files are not read again."""
        self._skipped: tuple[int, dict[str, list[str]]] = (checkpoint.turn, {})
        """The turn, and the commands of that turn whose changes were not compared, by why."""

    async def before(
        self, command: str, on_wait: Callable[[str], None] | None = None
    ) -> str | None:
        """Take the workspace for ``command``, then note it (in a worker thread).

        Returns:
            None, or why the command may not run (another session kept the workspace busy).
        """
        if self.lock is not None:
            try:
                self._held = await self.lock.acquire(command=command, on_wait=on_wait)
            except WorkspaceBusy as exc:
                return str(exc)
        self._command = command
        try:
            self._before = await anyio.to_thread.run_sync(
                partial(scan, self.checkpoint.root, previous=self._last, limits=self.limits)
            )
        except OSError as exc:  # the workspace folder itself is unreadable
            self._before = f"the workspace could not be read: {exc.strerror or exc}"
        except BaseException:
            self._release()
            raise
        return None

    @contextlib.asynccontextmanager
    async def editing(
        self, on_wait: Callable[[str], None] | None = None
    ) -> AsyncIterator[str | None]:
        """Hold the workspace shared around an edit call: no other session's command runs.

        Yields:
            None, or why the edit may not be made (another session kept the workspace busy).
        """
        held: HeldLock | None = None
        busy: str | None = None
        if self.lock is not None:
            try:
                held = await self.lock.acquire(command=None, on_wait=on_wait)
            except WorkspaceBusy as exc:
                busy = str(exc)
        try:
            yield busy
        finally:
            if held is not None:
                held.release()

    def _release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()

    async def after(self) -> list[CommandChange]:
        """Compare with the note taken before; record and return the command's text changes.

        The workspace is given back to other sessions once the changes are recorded.
        """
        try:
            return await self._compare()
        finally:
            self._release()

    async def _compare(self) -> list[CommandChange]:
        before, self._before = self._before, None
        if before is None:  # pragma: no cover - the pipeline always calls before() first
            return []
        command = _quoted(self._command)
        if isinstance(before, str):
            self._last = None
            self._not_compared(command, before)
            return []
        try:
            diff = await anyio.to_thread.run_sync(partial(changes, before, self.limits))
        except OSError as exc:
            self._last = None
            self._not_compared(command, str(exc.strerror or exc))
            return []
        self._last = diff.after
        try:  # many files may be written: off the event loop, as the scans
            recorded, skipped = await anyio.to_thread.run_sync(
                record_changes, self.checkpoint, diff.changes
            )
        except CheckpointError as exc:
            self._warn(f"the changes {command} made could not be recorded: {exc}")
            return []
        left = sorted(diff.unrecorded + skipped)
        if left:
            count = f"{len(left)} file{'s' if len(left) > 1 else ''}"
            self._note(
                f"Not listed for review: {count} {command} changed that "
                f"{'are' if len(left) > 1 else 'is'} not text, over "
                f"{self.limits.file_bytes // 1_000_000} MB or a link ({_names(left)})."
            )
        if diff.after is None:
            self._note(
                f"Not listed for review: files {command} created, if any (it left more than "
                f"{self.limits.files:,} files in the workspace, too many to compare)."
            )
        return recorded

    def _not_compared(self, command: str, why: str) -> None:
        """Say that ``command``'s changes are not listed, and why.

        One sentence per reason for all of the turn's commands: a workspace too large for one
        command is too large for every one.
        """
        turn, skipped = self._skipped
        if turn != self.checkpoint.turn:
            turn, skipped = self._skipped = (self.checkpoint.turn, {})
        commands = skipped.setdefault(why, [])
        old = _not_compared_text(commands, why) if commands else None
        commands.append(command)
        self._note(_not_compared_text(commands, why), replacing=old)

    def _note(self, text: str, replacing: str | None = None) -> None:
        try:
            if replacing in self.checkpoint.unlisted:
                self.checkpoint.unlisted.remove(replacing)
            self.checkpoint.unlisted.append(text)
            self.checkpoint.save()
        except CheckpointError as exc:
            self._warn(f"the checkpoint could not be updated: {exc}")
