"""``host.command_changes``: a command's changes become checkpoint records like an edit's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cadenza.host.checkpoints import FileState, SessionCheckpoint, disk_state
from cadenza.host.command_changes import CheckpointedCommands
from cadenza.host.turn_changes import (
    ReviewRefused,
    record_review,
    turn_files,
    undo_hunks,
    undone_note,
)
from cadenza.host.undo_plan import UndoRefused, plan_undo
from cadenza.tools.workspace_scan import ScanLimits


def later(path: Path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = (tmp_path / "ws").resolve()
    base.mkdir()
    (base / "app.py").write_text("a = 1\nb = 2\n")
    (base / "old.txt").write_text("old\n")
    return base


def checkpoint(tmp_path: Path, root: Path) -> SessionCheckpoint:
    return SessionCheckpoint.for_session("s1", root, base=tmp_path / "cp")


async def test_changes_are_recorded_listed_undone_and_told(tmp_path: Path, root: Path) -> None:
    made = checkpoint(tmp_path, root)
    watch = CheckpointedCommands(made)
    await watch.before("sed -i s/1/10/ app.py && echo new > new.txt && rm old.txt")
    (root / "app.py").write_text("a = 10\nb = 2\n")
    later(root / "app.py")
    (root / "new.txt").write_text("new\n")
    (root / "old.txt").unlink()
    changed = await watch.after()

    assert [(c.path, c.old_text, c.new_text, c.deleted) for c in changed] == [
        ("app.py", "a = 1\nb = 2\n", "a = 10\nb = 2\n", False),
        ("new.txt", None, "new\n", False),
        ("old.txt", "old\n", "", True),
    ]
    stored = SessionCheckpoint.load("s1", tmp_path / "cp")
    assert stored is not None and stored.unlisted == []
    files = {f.path: f for f in turn_files(stored, lambda p: disk_state(root / p))}
    assert sorted(files) == ["app.py", "new.txt", "old.txt"]
    [hunk] = files["app.py"].hunks
    assert (hunk.old_text, hunk.new_text) == ("a = 1\n", "a = 10\n")

    state = undo_hunks(files["app.py"], [hunk.id])
    assert state == FileState(exists=True, text="a = 1\nb = 2\n")
    (root / "app.py").write_text(state.text or "")
    record_review(stored, {hunk.id: "undone"}, {"app.py": state})
    note = undone_note(stored)
    assert note is not None and "app.py, line 1" in note and "a = 10" in note

    # Undo of the whole session: the created file removed, the deleted one recreated.
    steps = {s.path: s.action for s in plan_undo(stored, lambda p: disk_state(root / p))}
    assert steps == {"app.py": "unchanged", "new.txt": "remove", "old.txt": "recreate"}


async def test_a_file_edited_earlier_keeps_its_state_before_the_session(
    tmp_path: Path, root: Path
) -> None:
    made = checkpoint(tmp_path, root)
    path = root / "app.py"
    made.record_before(path, lambda: disk_state(path))
    path.write_text("a = 5\nb = 2\n")
    made.record_after(path, disk_state(path))
    watch = CheckpointedCommands(made)
    await watch.before("format")
    path.write_text("a = 5\nb = 20\n")
    later(path)
    await watch.after()
    entry = made.entries["app.py"]
    assert entry.before.text == entry.turn_before.text == "a = 1\nb = 2\n"  # type: ignore[union-attr]
    assert entry.after is not None and entry.after.text == "a = 5\nb = 20\n"
    made.begin_turn()
    await watch.before("format again")
    path.write_text("a = 6\nb = 20\n")
    later(path)
    await watch.after()
    assert entry.turn_before is not None and entry.turn_before.text == "a = 5\nb = 20\n"
    assert entry.before.text == "a = 1\nb = 2\n"


async def test_what_cannot_be_listed_is_said_in_plain_words(tmp_path: Path, root: Path) -> None:
    made = checkpoint(tmp_path, root)
    watch = CheckpointedCommands(made, limits=ScanLimits(files=1))
    await watch.before("npm run build")
    (root / "app.py").write_text("changed\n")
    assert await watch.after() == []
    assert made.entries == {}
    assert made.unlisted == [
        "Not listed for review: what `npm run build` changed (the workspace has more than 1 "
        "files, too many to compare before and after every command)."
    ]

    await watch.before("npm test")
    assert await watch.after() == []
    assert made.unlisted == [  # one sentence for the turn's commands, not one per command
        "Not listed for review: what the 2 commands it ran changed (the workspace has more "
        "than 1 files, too many to compare before and after every command)."
    ]

    watch = CheckpointedCommands(made)
    await watch.before("make")
    (root / "app.bin").write_bytes(b"\x00\x01")
    (root / "notes.txt").write_text("text\n")
    changed = await watch.after()
    assert [c.path for c in changed] == ["notes.txt"]
    assert made.unlisted[-1] == (
        "Not listed for review: 1 file `make` changed that is not text, over 1 MB or a link "
        "(app.bin)."
    )
    made.begin_turn()
    assert made.unlisted == []
    assert SessionCheckpoint.load("s1", tmp_path / "cp").unlisted == []  # type: ignore[union-attr]


async def test_nothing_changed_records_nothing(tmp_path: Path, root: Path) -> None:
    made = checkpoint(tmp_path, root)
    watch = CheckpointedCommands(made)
    await watch.before("true")
    later(root / "app.py")  # touched only
    assert await watch.after() == []
    assert made.entries == {} and made.unlisted == []


async def test_an_empty_file_a_command_created_is_one_hunk_undone_by_removal(
    tmp_path: Path, root: Path
) -> None:
    made = checkpoint(tmp_path, root)
    watch = CheckpointedCommands(made)
    await watch.before("touch marker.txt")
    (root / "marker.txt").touch()
    [change] = await watch.after()
    assert (change.path, change.old_text, change.new_text) == ("marker.txt", None, "")
    [file] = turn_files(made, lambda p: disk_state(root / p))
    [hunk] = file.hunks
    assert (hunk.old_text, hunk.new_text, hunk.start, hunk.end) == ("", "", 0, 0)
    assert undo_hunks(file, [hunk.id]) == FileState(exists=False)


async def test_a_link_put_in_place_since_is_never_read_or_written_by_undo(
    tmp_path: Path, root: Path
) -> None:
    made = checkpoint(tmp_path, root)
    (root / "src").mkdir()
    (root / "src" / "mod.py").write_text("x = 1\n")
    watch = CheckpointedCommands(made)
    await watch.before("edit src/mod.py")
    (root / "src" / "mod.py").write_text("x = 2\n")
    later(root / "src" / "mod.py")
    assert [c.path for c in await watch.after()] == ["src/mod.py"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("x = 2\n")  # what undo would overwrite through the link
    (root / "src" / "mod.py").unlink()
    (root / "src").rmdir()
    (root / "src").symlink_to(outside, target_is_directory=True)

    read: list[str] = []

    def current(path: str) -> FileState:
        read.append(path)
        return disk_state(root / path)

    [file] = turn_files(made, current)
    assert read == [] and all(h.start is None for h in file.hunks)
    with pytest.raises(ReviewRefused):
        undo_hunks(file, [h.id for h in file.hunks])
    with pytest.raises(UndoRefused, match="leads outside the workspace"):
        plan_undo(made, current)
    assert read == [] and (outside / "mod.py").read_text() == "x = 2\n"
