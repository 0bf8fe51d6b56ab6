"""The session's transcript is fsync'd once per step, not once per record (docs/lab/performance.md).

Every record is still written and flushed when ``append`` returns (a crash of the process loses
at most the line being written); the fsync that makes it survive a crash of the machine comes
with the next ``step`` event, a checkpoint, the session's end, or ``close``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cadenza.engine.events import SessionFinished, StepStarted, ToolCallFinished
from cadenza.engine.journal import TranscriptRecorder
from cadenza.engine.transcript import read_transcript
from cadenza.messages import UserMessage


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    synced: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return synced


def test_one_fsync_per_step_and_every_record_flushed(tmp_path: Path, fsyncs: list[int]) -> None:
    recorder = TranscriptRecorder.start(
        session_id="s1", task="t", root=tmp_path, workflow="default", model="m", directory=tmp_path
    )
    path = tmp_path / "s1.jsonl"
    assert len(fsyncs) == 1  # session_start
    for step in (1, 2):
        recorder.on_event(StepStarted(step=step, max_steps=5))
        recorder.on_message(UserMessage(content=f"m{step}"))
        recorder.on_event(ToolCallFinished(tool_call_id="c", content="x", status="completed"))
        # Flushed: another reader sees every record at once.
        assert len(read_transcript(path)) == 1 + 3 * step
    recorder.writer._settle()  # the step's fsync runs on a background thread
    assert len(fsyncs) == 1 + 2  # one per step event (it syncs itself and what came before)
    recorder.on_event(SessionFinished(stop_reason="end_turn", steps=2))
    assert len(fsyncs) == 4  # the end is synced at once
    recorder.close()
    assert len(fsyncs) == 4  # nothing left to sync
    assert [r.type for r in read_transcript(path)][-2:] == ["event", "session_end"]


def test_a_failed_background_fsync_is_raised_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = TranscriptRecorder.start(
        session_id="s2", task="t", root=tmp_path, workflow="default", model="m", directory=tmp_path
    )

    def failing(fd: int) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "fsync", failing)
    recorder.on_event(StepStarted(step=1, max_steps=5))  # starts the failing fsync
    monkeypatch.undo()
    recorder.on_message(UserMessage(content="m"))
    with pytest.raises(OSError, match="I/O error"):
        recorder.writer.sync()
    recorder.close()
