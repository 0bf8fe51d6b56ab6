"""The latest turn's hunks from a checkpoint: ids, moves, refusals, and the note to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.host.checkpoints import ABSENT, FileState, SessionCheckpoint
from cadenza.host.turn_changes import (
    ReviewRefused,
    begin_turn,
    record_review,
    turn_files,
    undo_hunks,
    undone_note,
)

BEFORE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
AFTER = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"


def text(value: str) -> FileState:
    return FileState(exists=True, text=value)


def checkpoint(tmp_path: Path, before: FileState, after: FileState) -> SessionCheckpoint:
    made = SessionCheckpoint.for_session("s1", tmp_path / "ws", base=tmp_path / "cp")
    path = made.absolute("app.py")
    made.record_before(path, lambda: before)
    made.record_after(path, after)
    return made


def test_two_hunks_then_one_undone_and_the_note(tmp_path: Path) -> None:
    made = checkpoint(tmp_path, text(BEFORE), text(AFTER))
    [file] = turn_files(made, lambda _: text(AFTER))
    first, second = file.hunks
    assert (first.old_text, first.new_text, first.line) == ("a = 1\n", "a = 10\n", 1)
    assert (second.start, second.end) == (AFTER.index("e = 50"), len(AFTER))
    state = undo_hunks(file, [second.id])
    assert state == text("a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n")
    record_review(made, {second.id: "undone"}, {"app.py": state})
    reloaded = SessionCheckpoint.load("s1", tmp_path / "cp")
    assert reloaded is not None and reloaded.review == {second.id: "undone"}
    assert reloaded.entries["app.py"].after == state
    note = undone_note(reloaded)
    assert note is not None and "app.py, line 5" in note and "e = 50" in note
    reloaded.begin_turn()
    assert turn_files(reloaded, lambda _: state) == []
    assert undone_note(reloaded) is None


def test_begin_turn_on_a_live_checkpoint_returns_the_note_once(tmp_path: Path) -> None:
    """The ACP face keeps its checkpoint: each prompt begins a turn on it (no reload)."""
    assert begin_turn(None) is None
    made = checkpoint(tmp_path, text(BEFORE), text(AFTER))
    [file] = turn_files(made, lambda _: text(AFTER))
    state = undo_hunks(file, [file.hunks[0].id])
    record_review(made, {file.hunks[0].id: "undone"}, {"app.py": state})
    note = begin_turn(made)
    assert note is not None and "app.py, line 1" in note
    assert made.turn == 1 and made.review == {}
    assert turn_files(made, lambda _: state) == []
    assert begin_turn(made) is None  # told once
    stored = SessionCheckpoint.load("s1", tmp_path / "cp")
    assert stored is not None and stored.turn == 2


def test_lines_typed_above_move_a_hunk_and_a_changed_hunk_is_refused(tmp_path: Path) -> None:
    made = checkpoint(tmp_path, text(BEFORE), text(AFTER))
    now = "# new\n" + AFTER.replace("e = 50", "e = 51")
    [file] = turn_files(made, lambda _: text(now))
    first, second = file.hunks
    assert (first.start, first.end) == (6, 6 + len("a = 10\n"))
    assert second.start is None
    with pytest.raises(ReviewRefused, match="changed at that change"):
        undo_hunks(file, [first.id, second.id])
    assert undo_hunks(file, [first.id]) == text("# new\n" + BEFORE.replace("e = 5", "e = 51"))


def test_a_created_file_undone_is_absent(tmp_path: Path) -> None:
    made = checkpoint(tmp_path, ABSENT, text("new\n"))
    [file] = turn_files(made, lambda _: text("new\n"))
    [hunk] = file.hunks
    assert (hunk.old_text, hunk.new_text) == ("", "new\n")
    assert undo_hunks(file, [hunk.id]) == ABSENT
