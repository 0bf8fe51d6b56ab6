"""Restoring a session to before one of the person's turns: the files each turn changed (from
the checkpoint's turn starts), the transcript cut before the turn, the turn's own words."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.engine.events import SessionFinished, SessionResumed
from cadenza.engine.transcript import (
    EventRecord,
    MessageRecord,
    SessionStartRecord,
    TranscriptRecord,
    TurnRecord,
    read_transcript,
    transcript_path,
)
from cadenza.engine.transcript_writer import TranscriptWriter
from cadenza.host.checkpoints import ABSENT, FileState, SessionCheckpoint
from cadenza.host.turn_restore import RestoreRefused, find_turn, restore_turn
from cadenza.host.undo_plan import UndoStep
from cadenza.messages import AssistantMessage, SystemMessage, UserMessage


def text(value: str) -> FileState:
    return FileState(exists=True, text=value)


class Files:
    """A face's files port over a dict of states (the editor's view)."""

    def __init__(self, states: dict[str, FileState]) -> None:
        self.states = states
        self.done: list[UndoStep] = []

    def current(self, relative: str) -> FileState:
        return self.states.get(relative, ABSENT)

    async def put_back(self, steps: list[UndoStep]) -> None:
        for step in steps:
            if step.action != "unchanged":
                self.done.append(step)
                if step.target.exists:
                    self.states[step.path] = step.target
                else:
                    self.states.pop(step.path, None)


def change(made: SessionCheckpoint, files: Files, name: str, new: FileState) -> None:
    """One applied edit of the session, recorded as ``host.edits`` records it."""
    path = made.absolute(name)
    made.record_before(path, lambda: files.current(name))
    made.record_after(path, new)
    files.states[name] = new


def three_turns(tmp_path: Path) -> tuple[SessionCheckpoint, Files]:
    """Turn 1: a.py v0 → v1; turn 2: a.py v1 → v2, b.py created; turn 3: c.py c0 → c1."""
    (tmp_path / "ws").mkdir()
    made = SessionCheckpoint.for_session("s1", tmp_path / "ws", base=tmp_path / "cp")
    files = Files({"a.py": text("v0\n"), "c.py": text("c0\n")})
    made.begin_person_turn(1)
    change(made, files, "a.py", text("v1\n"))
    made.begin_person_turn(2)
    change(made, files, "a.py", text("v2\n"))
    change(made, files, "b.py", text("new\n"))
    made.begin_person_turn(3)
    change(made, files, "c.py", text("c1\n"))
    return made, files


def transcript(tmp_path: Path) -> list[TranscriptRecord]:
    """Three turns: the task, a follow-up (with its context), a follow-up after a resume."""
    records: list[TranscriptRecord] = [
        SessionStartRecord(session_id="s1", task="t", root="/ws", workflow="w", model="m"),
        MessageRecord(message=SystemMessage(content="system")),
        TurnRecord(turn=1, text="make a"),
        MessageRecord(message=UserMessage(tag="task", content="make a")),
        MessageRecord(message=AssistantMessage(content="done a")),
        EventRecord(event=SessionFinished(stop_reason="end_turn")),
        EventRecord(event=SessionResumed(after="end_turn", reply="b please\n\nContext: x")),
        TurnRecord(turn=2, text="b please"),
        MessageRecord(message=UserMessage(tag="answer", content="b please\n\nContext: x")),
        MessageRecord(message=AssistantMessage(content="done b")),
        EventRecord(event=SessionFinished(stop_reason="end_turn")),
        MessageRecord(message=UserMessage(tag="answer", content="then c")),
    ]
    with TranscriptWriter(transcript_path("s1", tmp_path / "sessions")) as writer:
        for record in records:
            writer.append(record)
    return records


def test_find_turn_gives_the_persons_words_and_the_records_before(tmp_path: Path) -> None:
    records = transcript(tmp_path)
    second = find_turn("s1", records, 2)
    assert second.text == "b please"  # their words, not the context the model got
    assert second.keep == records[:6]  # the resume that opened the turn goes with it
    first = find_turn("s1", records, 1)
    assert (first.text, first.keep) == ("make a", records[:2])
    third = find_turn("s1", records, 3)  # no turn record (an older transcript): the message
    assert (third.text, third.keep) == ("then c", records[:11])
    with pytest.raises(RestoreRefused, match="session s1 has no turn 4: its turns are 1 to 3"):
        find_turn("s1", records, 4)


async def test_restoring_turn_two_puts_back_turns_two_and_three(tmp_path: Path) -> None:
    made, files = three_turns(tmp_path)
    records = transcript(tmp_path)
    cut = find_turn("s1", records, 2)

    done = await restore_turn(cut, made, lambda _: files, tmp_path / "sessions")

    assert files.states == {"a.py": text("v1\n"), "c.py": text("c0\n")}
    assert sorted((step.path, step.action) for step in done.steps) == [
        ("a.py", "restore"),
        ("b.py", "remove"),
        ("c.py", "restore"),
    ]
    assert done.skipped == []
    result = done.result()
    assert (result.turn, result.text) == (2, "b please")
    # The checkpoint: a.py's session state is now v1 (turn 1's); b.py and c.py are as before
    # the session, so they left it; stored so.
    reloaded = SessionCheckpoint.load("s1", tmp_path / "cp")
    assert reloaded is not None
    assert list(reloaded.entries) == ["a.py"]
    entry = reloaded.entries["a.py"]
    assert (entry.before, entry.after, list(entry.turn_starts)) == (
        text("v0\n"),
        text("v1\n"),
        [1],
    )
    assert read_transcript(transcript_path("s1", tmp_path / "sessions")) == records[:6]


async def test_a_file_the_person_changed_since_is_left_alone_and_named(tmp_path: Path) -> None:
    made, files = three_turns(tmp_path)
    transcript(tmp_path)
    files.states["c.py"] = text("mine\n")  # the person's own change after the session's
    cut = find_turn("s1", read_transcript(transcript_path("s1", tmp_path / "sessions")), 2)

    done = await restore_turn(cut, made, lambda _: files, tmp_path / "sessions")

    assert done.skipped == [("c.py", "changed after the session's last change to it")]
    assert files.states["c.py"] == text("mine\n")
    assert files.states["a.py"] == text("v1\n") and "b.py" not in files.states
    assert [skipped.path for skipped in done.result().skipped] == ["c.py"]
    entry = made.entries["c.py"]  # still the session's (undo still refuses it), no turn 3
    assert entry.after == text("c1\n") and entry.turn_starts == {}


async def test_turn_starts_survive_a_reload(tmp_path: Path) -> None:
    _, files = three_turns(tmp_path)
    reloaded = SessionCheckpoint.load("s1", tmp_path / "cp")
    assert reloaded is not None
    assert reloaded.entries["a.py"].turn_starts == {1: text("v0\n"), 2: text("v1\n")}
    assert reloaded.person_turn == 0  # not stored: the transcript counts the turns
    transcript(tmp_path)
    cut = find_turn("s1", read_transcript(transcript_path("s1", tmp_path / "sessions")), 3)
    done = await restore_turn(cut, reloaded, lambda _: files, tmp_path / "sessions")
    assert [(step.path, step.action) for step in done.steps] == [("c.py", "restore")]
    assert files.states["a.py"] == text("v2\n")
