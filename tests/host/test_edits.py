"""The one checkpointed edit delivery (``host.edits``): before, pending, after, or forgotten."""

from __future__ import annotations

import contextlib
from pathlib import Path

from cadenza.host.checkpoints import ABSENT, FileState, SessionCheckpoint, disk_state
from cadenza.host.edits import deliver_checkpointed
from cadenza.host.undo_plan import plan_undo
from cadenza.tools.host import EditOutcome, FileEdit

ID = "0123456789abcdef0123456789abcdef"


def _change(root: Path) -> FileEdit:
    path = root / "a.txt"
    return FileEdit(path=path, old_text="one\n", new_text="two\n", version=None, label="e")


async def test_pending_is_recorded_before_delivery_and_after_once_applied(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    checkpoint = SessionCheckpoint.for_session(ID, root, base=tmp_path / "cp")
    seen: list[FileState | None] = []

    async def deliver() -> EditOutcome:
        stored = SessionCheckpoint.load(ID, base=tmp_path / "cp")
        assert stored is not None
        seen.append(stored.entries["a.txt"].pending)  # on disk before the edit goes out
        (root / "a.txt").write_text("two\n")
        return EditOutcome(applied=True)

    outcome = await deliver_checkpointed(
        checkpoint, _change(root), state_of=disk_state, deliver=deliver, warn=print
    )
    assert outcome.applied
    assert seen == [FileState(exists=True, text="two\n")]
    entry = checkpoint.entries["a.txt"]
    assert entry.pending is None and entry.after == FileState(exists=True, text="two\n")
    assert entry.before.text == "one\n"


async def test_a_crash_after_delivery_still_undoes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    checkpoint = SessionCheckpoint.for_session(ID, root, base=tmp_path / "cp")

    async def crash() -> EditOutcome:
        (root / "a.txt").write_text("two\n")
        raise SystemExit  # the process dies before the outcome is recorded

    with contextlib.suppress(SystemExit):
        await deliver_checkpointed(
            checkpoint, _change(root), state_of=disk_state, deliver=crash, warn=print
        )
    stored = SessionCheckpoint.load(ID, base=tmp_path / "cp")
    assert stored is not None
    steps = plan_undo(stored, lambda relative: disk_state(root / relative))
    assert [(step.path, step.action) for step in steps] == [("a.txt", "restore")]


async def test_a_refused_edit_leaves_no_record(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    checkpoint = SessionCheckpoint.for_session(ID, root, base=tmp_path / "cp")
    edit = FileEdit(
        path=root / "b.txt", old_text=None, new_text="x", version=None, label="c", kind="create"
    )

    async def refuse() -> EditOutcome:
        return EditOutcome(applied=False, reason="no")

    outcome = await deliver_checkpointed(
        checkpoint, edit, state_of=lambda path: ABSENT, deliver=refuse, warn=print
    )
    assert not outcome.applied
    assert checkpoint.entries == {}


async def test_an_unwritable_checkpoint_refuses_before_delivery(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "cp").write_text("not a folder")
    checkpoint = SessionCheckpoint.for_session(ID, root, base=tmp_path / "cp")
    delivered: list[bool] = []

    async def deliver() -> EditOutcome:
        delivered.append(True)
        return EditOutcome(applied=True)

    outcome = await deliver_checkpointed(
        checkpoint, _change(root), state_of=lambda path: ABSENT, deliver=deliver, warn=print
    )
    assert not outcome.applied and outcome.refused_by == "cadenza"
    assert "nothing was changed" in (outcome.reason or "")
    assert delivered == []
