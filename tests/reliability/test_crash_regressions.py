"""Regression tests for what the crash-safety suite found (docs/lab/reliability.md)."""

from __future__ import annotations

from pathlib import Path

from cadenza.host.checkpoints import ABSENT, FileState, SessionCheckpoint
from cadenza.host.undo_plan import plan_undo

ID = "0123456789abcdef0123456789abcdef"


def _crash_mid_change(tmp_path: Path, before: FileState, pending: FileState) -> SessionCheckpoint:
    """Record a change as the editor does up to sending it; then 'crash' and reload."""
    root = tmp_path / "ws"
    checkpoint = SessionCheckpoint.for_session(ID, root, base=tmp_path / "checkpoints")
    checkpoint.record_before(root / "new.txt", lambda: before)
    checkpoint.record_pending(root / "new.txt", pending)
    loaded = SessionCheckpoint.load(ID, base=tmp_path / "checkpoints")
    assert loaded is not None
    return loaded


def test_undo_after_a_crash_while_the_editor_applied_a_change(tmp_path: Path) -> None:
    # Found by suite 4 (long mode): SIGKILL between the client applying a new file and the
    # server recording it left the checkpoint without an "after" state; undo skipped the
    # file (files: []) and the session's new file stayed.
    created = FileState(exists=True, text="new\n")
    checkpoint = _crash_mid_change(tmp_path, ABSENT, created)
    steps = plan_undo(checkpoint, lambda path: created)  # the editor had applied it
    assert [(s.path, s.action) for s in steps] == [("new.txt", "remove")]


def test_undo_after_a_crash_before_the_editor_applied_it(tmp_path: Path) -> None:
    checkpoint = _crash_mid_change(tmp_path, ABSENT, FileState(exists=True, text="new\n"))
    assert plan_undo(checkpoint, lambda path: ABSENT) == []  # nothing was changed


def test_a_refused_change_leaves_nothing_pending(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    checkpoint = SessionCheckpoint.for_session(ID, root, base=tmp_path / "checkpoints")
    checkpoint.record_before(root / "new.txt", lambda: ABSENT)
    checkpoint.record_pending(root / "new.txt", FileState(exists=True, text="x"))
    checkpoint.forget_unapplied([root / "new.txt"])
    loaded = SessionCheckpoint.load(ID, base=tmp_path / "checkpoints")
    assert loaded is not None and loaded.entries == {}
