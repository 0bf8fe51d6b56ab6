"""Checkpoints of a session's file changes, and the plan that undoes them.

Before a session first changes a file it records the file's state (its text, its exact bytes
when read from disk, or its absence); after each change it records the state it left. The
records live outside the workspace, in ``<user state dir>/checkpoints/<sessionId>/``
(platformdirs: ``$XDG_STATE_HOME/cadenza`` on Linux): a ``manifest.json`` and content-addressed
blobs. Nothing here touches the person's repository (no ``git stash``, no ``git clean``), and
only files the session changed are ever listed, so a file the person created meanwhile is
never touched (field case F16).

``plan_undo`` compares each file's state now with the state the session left: a file the
person changed since is refused by name (no silent clobber), one already back as it was is
left alone, and the rest get one step each. Applying the steps is the editor face's job
(``workspace/applyEdit``, or the disk for clients without it).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import platformdirs

from cadenza.textio import UndecodableError, decode_bytes, write_atomic
from cadenza.tools.host import FileEdit

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
    """

    path: str
    before: FileState
    after: FileState | None = None
    pending: FileState | None = None


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
    undone: bool = False
    entries: dict[str, CheckpointEntry] = field(default_factory=dict)

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
            )
            for item in raw["files"]:
                before = checkpoint._read_state(item["before"])
                after = None if item["after"] is None else checkpoint._read_state(item["after"])
                pending = item.get("pending")
                entry = CheckpointEntry(
                    path=str(item["path"]),
                    before=before,
                    after=after,
                    pending=None if pending is None else checkpoint._read_state(pending),
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
        if key in self.entries:
            return
        self.entries[key] = CheckpointEntry(path=key, before=state())
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
        entry.after = state
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
                **(
                    {"pending": self._write_state(entry.pending)}
                    if entry.pending is not None
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

    def _read_blob(self, name: str) -> bytes:
        data = (self.directory / "blobs" / name).read_bytes()
        if _digest(data) != name:
            raise ValueError(f"blob {name} is damaged")
        return data

    def _write_state(self, state: FileState) -> dict[str, Any]:
        return {
            "exists": state.exists,
            "text": None if state.text is None else self._write_blob(_text_bytes(state.text)),
            "data": None if state.data is None else self._write_blob(state.data),
            "origin": state.origin,
        }

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


# --- undo ---------------------------------------------------------------------------------

UndoAction = Literal["restore", "remove", "recreate", "move_back", "unchanged"]


@dataclass(frozen=True, kw_only=True)
class UndoStep:
    """What undo does to one file.

    Attributes:
        action: ``restore`` the text it had; ``remove`` a file the session created;
            ``recreate`` a file the session deleted; ``move_back`` a file the session renamed
            (then restore its text if it changed); ``unchanged``: already as before.
        path: The file as it will be after undo (workspace-relative).
        current_path: Where the file is now (``move_back``: the new name), else ``path``.
        current: The file's state now (its text, or absent).
        target: The state to restore (``before``): text and, when known, exact bytes.
    """

    action: UndoAction
    path: str
    current_path: str
    current: FileState
    target: FileState


class UndoRefused(Exception):
    """Undo would overwrite changes made since the session's; ``files`` says which and why."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        listed = "; ".join(f"{path} {why}" for path, why in problems)
        super().__init__(f"{listed}. Nothing was undone")


def _same(state: FileState, expected: FileState) -> bool:
    if state.exists != expected.exists:
        return False
    return not state.exists or state.text == expected.text


def _pair_renames(
    entries: dict[str, CheckpointEntry], current: Callable[[str], FileState]
) -> tuple[list[UndoStep], set[str]]:
    """``move_back`` steps for files the session renamed, when both ends are as it left them."""
    steps: list[UndoStep] = []
    done: set[str] = set()
    for entry in entries.values():
        after = entry.after
        if after is None or entry.before.exists or not after.exists or after.origin is None:
            continue
        source = entries.get(after.origin)
        if source is None or not source.before.exists or source.after is None:
            continue
        if source.after.exists or source.path in done:
            continue
        now, source_now = current(entry.path), current(source.path)
        if source_now.exists or not _same(now, after):
            continue
        steps.append(
            UndoStep(
                action="move_back",
                path=source.path,
                current_path=entry.path,
                current=now,
                target=source.before,
            )
        )
        done.update((entry.path, source.path))
    return steps, done


def _step(entry: CheckpointEntry, now: FileState) -> UndoStep | str:
    """The step for one file, or why undo must not touch it."""
    before, after = entry.before, entry.after
    assert after is not None

    def step(action: UndoAction) -> UndoStep:
        return UndoStep(
            action=action, path=entry.path, current_path=entry.path, current=now, target=before
        )

    if _same(now, before):
        return step("unchanged")
    if not _same(now, after):
        if not now.exists:
            return "was deleted after the session's last change to it"
        if not after.exists:
            return "was created again after the session deleted it"
        return "changed after the session's last change to it"
    if not before.exists:
        return step("remove")
    if not after.exists:
        return step("recreate")
    return step("restore")


def _settle(entry: CheckpointEntry, current: Callable[[str], FileState]) -> CheckpointEntry:
    """``entry`` with its pending change counted as applied when the file shows it.

    A change is pending when the server stopped while the editor applied it.
    """
    if entry.pending is not None and _same(current(entry.path), entry.pending):
        return replace(entry, after=entry.pending, pending=None)
    return entry


def plan_undo(checkpoint: SessionCheckpoint, current: Callable[[str], FileState]) -> list[UndoStep]:
    """The steps that put every file the session changed back as it was before the session.

    Args:
        checkpoint: The session's checkpoint.
        current: The state of a workspace-relative path now, as the editor sees it (an open
            buffer's text, else the disk).

    Returns:
        One step per changed file (``unchanged`` ones included), renames first.

    Raises:
        UndoRefused: A file changed since the session's last change to it (its name and why);
            then nothing may be undone.
    """
    entries = {key: _settle(entry, current) for key, entry in checkpoint.entries.items()}
    steps, paired = _pair_renames(entries, current)
    problems: list[tuple[str, str]] = []
    for entry in entries.values():
        if entry.path in paired or entry.after is None:
            continue
        result = _step(entry, current(entry.path))
        if isinstance(result, str):
            problems.append((entry.path, result))
        else:
            steps.append(result)
    if problems:
        raise UndoRefused(problems)
    return steps


def disk_state(path: Path) -> FileState:
    """The state of ``path`` on disk: absent, or its bytes and (when it is text) its text."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return ABSENT
    try:
        text: str | None = decode_bytes(data).text
    except UndecodableError:
        text = None
    return FileState(exists=True, text=text, data=data)


def after_states(checkpoint: SessionCheckpoint, edit: FileEdit) -> list[tuple[Path, FileState]]:
    """The state each file touched by ``edit`` is in once applied (a rename keeps its origin)."""
    if edit.kind == "rename":
        assert edit.new_path is not None  # FileEdit.__post_init__
        origin = checkpoint.origin_of(edit.path)
        return [
            (edit.path, ABSENT),
            (edit.new_path, FileState(exists=True, text=edit.new_text, origin=origin)),
        ]
    if edit.kind == "delete":
        return [(edit.path, ABSENT)]
    return [(edit.path, FileState(exists=True, text=edit.new_text))]


def record_after(checkpoint: SessionCheckpoint, edit: FileEdit) -> None:
    """Record what an applied ``edit`` left its files in.

    Raises:
        CheckpointError: The checkpoint cannot be written.
    """
    for path, state in after_states(checkpoint, edit):
        checkpoint.record_after(path, state)
