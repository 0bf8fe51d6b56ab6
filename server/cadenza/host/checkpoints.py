"""Checkpoints of a session's file changes: what each file was before, and after.

Before a session first changes a file it records the file's state (its text, its exact bytes
when read from disk, or its absence); after each change it records the state it left. The
records live outside the workspace, in ``<user state dir>/checkpoints/<sessionId>/``
(platformdirs: ``$XDG_STATE_HOME/cadenza`` on Linux): a ``manifest.json`` and content-addressed
blobs. Nothing here touches the person's repository (no ``git stash``, no ``git clean``), and
only files the session changed are ever listed, so a file the person created meanwhile is
never touched. ``host.edits`` records around every edit; ``host.undo_plan``
reads the records back into the steps that undo a session.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import platformdirs

from cadenza.fileread import FileReadError, FileTooLarge, NotRegularFile, read_regular
from cadenza.textio import UndecodableError, decode_bytes, write_atomic

FORMAT = 1
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def checkpoints_dir() -> Path:
    """``<user state dir>/checkpoints``: where every session's checkpoint folder lives."""
    return Path(platformdirs.user_state_dir("cadenza")) / "checkpoints"


class CheckpointError(Exception):
    """A checkpoint cannot be written or read; the message says which and why."""


@dataclass(frozen=True, kw_only=True)
class FileState:
    """A file as the session saw it at one moment.

    Attributes:
        exists: Whether the file (or an editor buffer) existed.
        text: Its text (code points, no BOM), when it existed.
        data: Its exact bytes when read from disk (None for an editor buffer).
        origin: For a file the session made by renaming: the workspace-relative path of the
            file it came from (followed back through renames), so undo renames it back.
    """

    exists: bool
    text: str | None = None
    data: bytes | None = None
    origin: str | None = None


ABSENT = FileState(exists=False)


@dataclass(kw_only=True)
class CheckpointEntry:
    """One file the session changed: its state before the first change and after the last.

    Attributes:
        path: Workspace-relative path with ``/`` separators.
        before: The state before the session's first change.
        after: The state after its last applied change; None until one was applied.
        pending: The state the change in flight will leave it in, recorded before the change
            is sent and cleared once its outcome is known: after a crash in between, a file in
            this state had the change applied (undo then treats it as ``after``).
        turn_before: Its state before the latest turn's first change to it (None: the
            latest turn did not change it); the review of a turn diffs it with ``turn_after``.
        turn_after: The state the latest turn's last change left it in (``after`` also
            follows the person's per-hunk undo; this one does not).
        turn_starts: Its state before the first change of each of the person's turns that
            changed it (key: the turn, 1-based): restoring the session to before a turn puts
            it back to the earliest one from that turn on (``host.turn_restore``).
    """

    path: str
    before: FileState
    after: FileState | None = None
    pending: FileState | None = None
    turn_before: FileState | None = None
    turn_after: FileState | None = None
    turn_starts: dict[int, FileState] = field(default_factory=dict)


MEMO_BLOBS = 64  # texts whose blob names a checkpoint remembers (and keeps alive)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _text_bytes(text: str) -> bytes:
    # Buffers arrive as JSON strings, which may hold lone surrogates: keep them exactly.
    return text.encode("utf-8", "surrogatepass")


@dataclass(kw_only=True)
class SessionCheckpoint:
    """The checkpoint of one session, persisted after every change.

    Args:
        directory: The session's folder (created on the first record).
        session_id: The session's id.
        root: The workspace root the paths are relative to.
    """

    directory: Path
    session_id: str
    root: Path
    # Blob names of recent texts by identity (object kept): a save hashes only new texts, not
    # every state (10 MB: ~40 ms each; an edit's pending and applied states share one text).
    _blobs: OrderedDict[int, tuple[str | bytes, str]] = field(
        default_factory=OrderedDict, repr=False, compare=False
    )
    undone: bool = False
    entries: dict[str, CheckpointEntry] = field(default_factory=dict)
    turn: int = 0
    """The latest turn's number (``begin_turn``); hunk ids are made with it."""
    review: dict[str, str] = field(default_factory=dict)
    """The latest turn's reviewed hunks: id → ``kept`` or ``undone`` (``host.turn_changes``)."""
    unlisted: list[str] = field(default_factory=list)
    """The latest turn's changes not listed for review, why (``host.command_changes``)."""
    person_turn: int = 0
    """The person's turn changes now belong to (0: unknown; not stored: the transcript counts)."""

    @classmethod
    def for_session(
        cls, session_id: str, root: Path, base: Path | None = None
    ) -> SessionCheckpoint:
        """A new, empty checkpoint in ``base`` (default ``checkpoints_dir()``).

        Raises:
            CheckpointError: The session id cannot name a folder.
        """
        return cls(directory=_session_dir(session_id, base), session_id=session_id, root=root)

    @classmethod
    def load(cls, session_id: str, base: Path | None = None) -> SessionCheckpoint | None:
        """The stored checkpoint of ``session_id``, or None when it has none.

        Raises:
            CheckpointError: The manifest or a blob is unreadable or malformed.
        """
        directory = _session_dir(session_id, base)
        manifest = directory / "manifest.json"
        if not manifest.is_file():
            return None
        try:
            raw = json.loads(manifest.read_text(encoding="utf-8"))
            checkpoint = cls(
                directory=directory,
                session_id=str(raw["sessionId"]),
                root=Path(raw["root"]),
                undone=bool(raw.get("undone", False)),
                turn=int(raw.get("turn", 0)),
                review={str(k): str(v) for k, v in raw.get("review", {}).items()},
                unlisted=[str(note) for note in raw.get("unlisted", [])],
            )
            for item in raw["files"]:
                entry = CheckpointEntry(
                    path=str(item["path"]),
                    before=checkpoint._read_state(item["before"]),
                    after=checkpoint._optional_state(item["after"]),
                    pending=checkpoint._optional_state(item.get("pending")),
                    turn_before=checkpoint._optional_state(item.get("turnBefore")),
                    turn_after=checkpoint._optional_state(item.get("turnAfter")),
                    turn_starts={
                        int(turn): checkpoint._read_state(state)
                        for turn, state in item.get("turnStarts", {}).items()
                    },
                )
                checkpoint.entries[entry.path] = entry
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"the checkpoint {manifest} is unreadable: {exc}") from None
        return checkpoint

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, with ``/`` separators."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def absolute(self, relative: str) -> Path:
        """The absolute path of a workspace-relative one."""
        return self.root / relative

    def recorded(self, path: Path) -> bool:
        """Whether the session already recorded ``path``."""
        return self.relative(path) in self.entries

    def entry(self, path: Path) -> CheckpointEntry | None:
        """The record of ``path``, if any."""
        return self.entries.get(self.relative(path))

    def record_before(self, path: Path, state: Callable[[], FileState]) -> None:
        """Record ``path``'s state before the session's first change to it (later calls: no-op).

        Args:
            path: The file.
            state: Reads the state now; called only for a file not yet recorded.

        Raises:
            CheckpointError: The checkpoint cannot be written (then nothing may change).
        """
        key = self.relative(path)
        entry = self.entries.get(key)
        read: list[FileState] = []  # read at most once, only when something is recorded

        def now() -> FileState:
            if not read:
                read.append(state())
            return read[0]

        if entry is None:
            entry = self.entries[key] = CheckpointEntry(path=key, before=now(), turn_before=now())
        elif entry.turn_before is None:  # the turn's first change to a file changed earlier
            entry.turn_before = now()
        if self.person_turn and self.person_turn not in entry.turn_starts:
            entry.turn_starts[self.person_turn] = now()
        if read:
            self.save()

    def begin_person_turn(self, turn: int) -> None:
        """Changes from now on belong to the person's ``turn`` (``turn_starts``)."""
        self.person_turn = turn

    def begin_turn(self) -> None:
        """Start the session's next turn: its review starts empty.

        Raises:
            CheckpointError: The checkpoint cannot be written.
        """
        self.turn += 1
        self.review = {}
        for entry in self.entries.values():
            entry.turn_before = entry.turn_after = None
        if self.entries or self.unlisted:
            self.unlisted = []
            self.save()

    def record_after(self, path: Path, state: FileState) -> None:
        """Record the state the session's latest applied change left ``path`` in.

        A file that still exists keeps the rename ``origin`` recorded earlier (a file renamed,
        then edited, is still renamed back by undo).

        Raises:
            CheckpointError: The checkpoint cannot be written.
        """
        entry = self.entries.get(self.relative(path))
        if entry is None:  # pragma: no cover - record_before always comes first
            raise CheckpointError(f"{path} was changed without a checkpoint")
        if state.exists and state.origin is None and entry.after is not None:
            state = replace(state, origin=entry.after.origin)
        entry.after = entry.turn_after = state
        entry.pending = None
        self.save()

    def record_pending(self, path: Path, state: FileState) -> None:
        """Record the state a change about to be sent will leave ``path`` in (see ``pending``).

        Raises:
            CheckpointError: The checkpoint cannot be written (then nothing may change).
        """
        entry = self.entries.get(self.relative(path))
        if entry is None:  # pragma: no cover - record_before always comes first
            raise CheckpointError(f"{path} was changed without a checkpoint")
        if state.exists and state.origin is None and entry.after is not None:
            state = replace(state, origin=entry.after.origin)
        entry.pending = state
        self.save()

    def forget_unapplied(self, paths: Iterable[Path]) -> None:
        """Drop records of files no change of the session was ever applied to (a refusal)."""
        dropped = False
        for path in paths:
            key = self.relative(path)
            entry = self.entries.get(key)
            if entry is not None and entry.pending is not None:
                entry.pending = None
                dropped = True
            if entry is not None and entry.turn_after is None and entry.turn_before is not None:
                entry.turn_before = None
                dropped = True
            if entry is not None and entry.after is None:
                del self.entries[key]
                dropped = True
        if dropped:
            self.save()

    def origin_of(self, path: Path) -> str:
        """Where the file at ``path`` came from in this session: itself, or a rename source."""
        entry = self.entry(path)
        if entry is not None and not entry.before.exists and entry.after is not None:
            return entry.after.origin or self.relative(path)
        return self.relative(path)

    def mark_undone(self) -> None:
        """Remember that the session's changes were undone.

        Raises:
            CheckpointError: The checkpoint cannot be written.
        """
        self.undone = True
        self.save()

    def save(self) -> None:
        """Write the manifest (atomically) and any blob not yet written.

        Raises:
            CheckpointError: The state folder is not writable (disk full, permissions).
        """
        files = [
            {
                "path": entry.path,
                "before": self._write_state(entry.before),
                "after": None if entry.after is None else self._write_state(entry.after),
                **self._optional_fields(
                    pending=entry.pending,
                    turnBefore=entry.turn_before,
                    turnAfter=entry.turn_after,
                ),
                **(
                    {
                        "turnStarts": {
                            str(turn): self._write_state(state)
                            for turn, state in entry.turn_starts.items()
                        }
                    }
                    if entry.turn_starts
                    else {}
                ),
            }
            for entry in self.entries.values()
        ]
        manifest = {
            "format": FORMAT,
            "sessionId": self.session_id,
            "root": str(self.root),
            "undone": self.undone,
            "turn": self.turn,
            "review": self.review,
            "unlisted": self.unlisted,
            "files": files,
        }
        try:
            write_atomic(self.directory / "manifest.json", json.dumps(manifest, indent=1).encode())
        except OSError as exc:
            raise CheckpointError(
                f"cannot write the checkpoint in {self.directory}: {exc.strerror or exc}"
            ) from None

    def _write_blob(self, data: bytes) -> str:
        name = _digest(data)
        path = self.directory / "blobs" / name
        if not path.exists():
            try:
                write_atomic(path, data)
            except OSError as exc:
                raise CheckpointError(
                    f"cannot write the checkpoint in {self.directory}: {exc.strerror or exc}"
                ) from None
        return name

    def _blob_of(self, value: str | bytes) -> str:
        """Its blob name, hashed and written unless seen lately (a removed blob is rewritten)."""
        known = self._blobs.get(id(value))
        if known is None or not (self.directory / "blobs" / known[1]).exists():
            data = _text_bytes(value) if isinstance(value, str) else value
            known = self._blobs[id(value)] = (value, self._write_blob(data))
        self._blobs.move_to_end(id(value))
        while len(self._blobs) > MEMO_BLOBS:
            self._blobs.popitem(last=False)
        return known[1]

    def _read_blob(self, name: str) -> bytes:
        data = (self.directory / "blobs" / name).read_bytes()
        if _digest(data) != name:
            raise ValueError(f"blob {name} is damaged")
        return data

    def _write_state(self, state: FileState) -> dict[str, Any]:
        return {
            "exists": state.exists,
            "text": None if state.text is None else self._blob_of(state.text),
            "data": None if state.data is None else self._blob_of(state.data),
            "origin": state.origin,
        }

    def _optional_fields(self, **states: FileState | None) -> dict[str, Any]:
        return {key: self._write_state(state) for key, state in states.items() if state is not None}

    def _optional_state(self, raw: dict[str, Any] | None) -> FileState | None:
        return None if raw is None else self._read_state(raw)

    def _read_state(self, raw: dict[str, Any]) -> FileState:
        text = raw.get("text")
        data = raw.get("data")
        return FileState(
            exists=bool(raw["exists"]),
            text=None if text is None else self._read_blob(text).decode("utf-8", "surrogatepass"),
            data=None if data is None else self._read_blob(data),
            origin=raw.get("origin"),
        )


def _session_dir(session_id: str, base: Path | None) -> Path:
    if not _SESSION_ID.match(session_id) or session_id in (".", ".."):
        raise CheckpointError(f"{session_id!r} is not a session id")
    return (base or checkpoints_dir()) / session_id


def disk_state(path: Path) -> FileState:
    """The state of ``path`` on disk: absent, or its bytes and (when it is text) its text.

    Only a regular file is read, at most ``fileread.MAX_TEXT_BYTES`` of it: a FIFO, a device
    or a larger file exists with neither bytes nor text (never read, so never a hang).

    Raises:
        OSError: It cannot be read (``fileread.FileReadError``: permission, a link loop).
    """
    try:
        data = read_regular(path)
    except NotRegularFile as exc:
        return ABSENT if exc.kind == "directory" else FileState(exists=True)
    except FileTooLarge:
        return FileState(exists=True)
    except FileReadError:
        if not os.path.lexists(path):
            return ABSENT
        raise
    try:
        text: str | None = decode_bytes(data).text
    except UndecodableError:
        text = None
    return FileState(exists=True, text=text, data=data)
