"""Transcripts: append-only JSONL per session, flushed per record, readable after a crash."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cadenza.engine.events import SessionFinished, StepStarted
from cadenza.engine.history import check_strict, sanitize_history
from cadenza.engine.session_list import list_sessions, session_state
from cadenza.engine.transcript import (
    CheckpointRecord,
    EventRecord,
    MessageRecord,
    SessionEndRecord,
    SessionStartRecord,
    TranscriptError,
    TranscriptRecord,
    decode_record,
    history_from_records,
    read_transcript,
    transcript_dir,
    transcript_path,
)
from cadenza.engine.transcript_writer import TranscriptWriter
from cadenza.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from cadenza.schema.outcome import SessionOutcome

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
CALL = ToolCall(id="call_1", name="read_file", arguments='{"path": "a.py"}')


def start(
    session_id: str = "s1", task: str = "fix the bug", time: datetime = T0
) -> SessionStartRecord:
    return SessionStartRecord(
        session_id=session_id,
        task=task,
        root="/work/project",
        workflow="default",
        model="local/qwen2.5-coder-1.5b",
        time=time,
    )


def every_kind() -> list[TranscriptRecord]:
    return [
        start(),
        MessageRecord(message=SystemMessage(content="system")),
        MessageRecord(message=UserMessage(content="fix the bug")),
        EventRecord(event=StepStarted(step=1, max_steps=25)),
        MessageRecord(message=AssistantMessage(content="", tool_calls=[CALL])),
        MessageRecord(
            message=ToolMessage(tool_call_id="call_1", name="read_file", content="x", is_error=True)
        ),
        CheckpointRecord(movement="work", note="read a.py; next: edit it"),
        EventRecord(event=SessionFinished(stop_reason="end_turn", message="done", steps=1)),
        SessionEndRecord(stop_reason="end_turn", message="done"),
    ]


def write(path: Path, records: list[TranscriptRecord]) -> None:
    with TranscriptWriter(path) as writer:
        for record in records:
            writer.append(record)


def test_every_record_kind_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "s1.jsonl"
    records = every_kind()
    write(path, records)
    assert read_transcript(path) == records


def test_one_json_object_per_line_with_camel_case_keys(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    write(path, every_kind())
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    assert first == {
        "type": "session_start",
        "sessionId": "s1",
        "task": "fix the bug",
        "root": "/work/project",
        "workflow": "default",
        "model": "local/qwen2.5-coder-1.5b",
        "time": "2025-01-02T03:04:05Z",
    }
    assert last == {"type": "session_end", "stopReason": "end_turn", "message": "done"}
    assert json.loads(lines[4])["message"]["tool_calls"][0]["id"] == "call_1"
    assert json.loads(lines[3])["event"] == {
        "kind": "step",
        "step": 1,
        "max_steps": 25,
        "run_step": 0,
        "elapsed_s": 0.0,
        "budget_s": None,
    }


def test_a_session_end_event_in_an_older_transcript_still_reads() -> None:
    # Written with snake_case keys and nulls, as the event was before it carried the outcome.
    event = {
        "kind": "session_end",
        "stop_reason": "needs_user_input",
        "message": "Which name?",
        "steps": 2,
        "missing_info": "the name",
        "why_no_default": "two fit",
        "browser_session_id": None,
        "url": None,
        "act_url": None,
    }
    record = decode_record(json.dumps({"type": "event", "event": event}))
    assert isinstance(record, EventRecord) and isinstance(record.event, SessionFinished)
    assert record.event.outcome() == SessionOutcome(
        stop_reason="needs_user_input",
        message="Which name?",
        steps=2,
        missing_info="the name",
        why_no_default="two fit",
    )


def test_snake_case_names_are_accepted_on_input() -> None:
    record = SessionEndRecord.model_validate({"stop_reason": "cancelled"})
    assert record.stop_reason == "cancelled"


def test_each_record_is_on_disk_and_fsynced_when_append_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    path = tmp_path / "s1.jsonl"
    writer = TranscriptWriter(path)
    writer.append(start())
    assert len(synced) == 1
    assert read_transcript(path) == [start()]  # read by another handle, writer still open
    writer.append(SessionEndRecord(stop_reason="end_turn"))
    assert len(synced) == 2
    assert len(read_transcript(path)) == 2
    writer.close()


def test_truncated_last_line_is_skipped_not_raised(tmp_path: Path) -> None:
    """A crash mid-write leaves a partial last line: the records before it are all read."""
    path = tmp_path / "s1.jsonl"
    records = every_kind()[:5]
    write(path, records)
    with path.open("ab") as f:
        f.write(b'{"type": "message", "message": {"role": "tool", "tool_call_id": "ca')
    assert read_transcript(path) == records


def test_garbled_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    write(path, [start()])
    with path.open("ab") as f:
        f.write(b"\x00\x00\xff garbage\n")
    assert read_transcript(path) == [start()]


def test_valid_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    write(path, [start(), SessionEndRecord(stop_reason="end_turn")])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert [r.type for r in read_transcript(path)] == ["session_start", "session_end"]


def test_damage_before_the_last_line_raises_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    write(path, [start()])
    with path.open("ab") as f:
        f.write(b'{"type": "nonsense"}\n')
    write(path, [SessionEndRecord(stop_reason="end_turn")])
    with pytest.raises(TranscriptError, match=r"s1\.jsonl:2: not a transcript record"):
        read_transcript(path)


def test_blank_lines_are_ignored_and_empty_file_has_no_records(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b"")
    assert read_transcript(path) == []
    write(path, [start()])
    with path.open("ab") as f:
        f.write(b"\n  \n")
    assert read_transcript(path) == [start()]


def test_unicode_line_separators_in_text_do_not_split_records(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    text = "a\u2028b\u2029c\x85d\r\ne — ✓ 😀"
    write(path, [MessageRecord(message=UserMessage(content=text))])
    (record,) = read_transcript(path)
    assert isinstance(record, MessageRecord)
    assert record.message.content == text
    assert path.read_bytes().count(b"\n") == 1


def test_reopening_after_a_crash_cuts_the_partial_record_then_appends(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    write(path, [start()])
    with path.open("ab") as f:
        f.write(b'{"type": "checkpoint", "movem')
    write(path, [SessionEndRecord(stop_reason="cancelled")])
    assert [r.type for r in read_transcript(path)] == ["session_start", "session_end"]
    assert path.read_bytes().endswith(b"\n") and b"movem" not in path.read_bytes()


def test_reopening_keeps_a_whole_record_missing_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    write(path, [start()])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    write(path, [SessionEndRecord(stop_reason="end_turn")])
    assert [r.type for r in read_transcript(path)] == ["session_start", "session_end"]


def test_reopening_a_file_whose_only_line_is_partial_empties_it(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b'{"type": "sess')
    write(path, [start()])
    assert read_transcript(path) == [start()]


def test_reopening_cuts_a_partial_record_longer_than_one_read_chunk(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    write(path, [start()])
    with path.open("ab") as f:
        f.write(b'{"type": "message", "message": {"role": "user", "content": "' + b"x" * 200_000)
    write(path, [SessionEndRecord(stop_reason="end_turn")])
    assert [r.type for r in read_transcript(path)] == ["session_start", "session_end"]


def test_closed_writer_refuses_and_close_is_idempotent(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s1.jsonl")
    writer.close()
    writer.close()
    assert writer.closed
    with pytest.raises(ValueError, match="closed"):
        writer.append(start())


def test_history_from_records_keeps_only_messages_in_order() -> None:
    history = history_from_records(every_kind())
    assert [m.role for m in history] == ["system", "user", "assistant", "tool"]


def test_a_crashed_transcript_prefix_replays_as_a_strict_history(tmp_path: Path) -> None:
    """Crash after the assistant asked for two calls and only one result was written."""
    path = tmp_path / "s1.jsonl"
    second = ToolCall(id="call_2", name="search", arguments='{"pattern": "x"}')
    write(
        path,
        [
            start(),
            MessageRecord(message=SystemMessage(content="system")),
            MessageRecord(message=UserMessage(content="task")),
            MessageRecord(message=AssistantMessage(tool_calls=[CALL, second])),
            MessageRecord(
                message=ToolMessage(tool_call_id="call_1", name="read_file", content="x")
            ),
        ],
    )
    with path.open("ab") as f:
        f.write(b'{"type": "message", "message": {"role": "tool", "tool_call_id": "call_2", "na')
    history = sanitize_history(history_from_records(read_transcript(path)))
    check_strict(history)
    assert [m.role for m in history] == ["system", "user", "assistant", "tool", "tool"]
    assert isinstance(history[-1], ToolMessage) and history[-1].is_error


def test_session_id_must_be_a_plain_file_name(tmp_path: Path) -> None:
    assert transcript_path("0123abcdef", tmp_path) == tmp_path / "0123abcdef.jsonl"
    assert transcript_path("run-1.retry_2", tmp_path).name == "run-1.retry_2.jsonl"
    for bad in ["", "../escape", "a/b", ".hidden", "a\x00b", "x" * 129]:
        with pytest.raises(ValueError, match="invalid session id"):
            transcript_path(bad, tmp_path)


def test_writer_for_session_creates_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "sessions"
    with TranscriptWriter.for_session("abc", folder) as writer:
        writer.append(start("abc"))
    assert read_transcript(folder / "abc.jsonl") == [start("abc")]


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_STATE_HOME is the Linux convention")
def test_default_folder_honours_xdg_state_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert transcript_dir() == tmp_path / "state" / "cadenza" / "sessions"
    assert transcript_path("s9") == tmp_path / "state" / "cadenza" / "sessions" / "s9.jsonl"
    assert transcript_dir(tmp_path / "mine") == tmp_path / "mine"


def test_session_state_from_records() -> None:
    ended: list[TranscriptRecord] = [start(), SessionEndRecord(stop_reason="max_steps")]
    assert session_state(ended) == "max_steps"
    assert session_state([start()]) == "interrupted"
    assert session_state([]) == "interrupted"
    resumed: list[TranscriptRecord] = [
        *ended,
        MessageRecord(message=UserMessage(content="use port 8080")),
    ]
    assert session_state(resumed) == "interrupted"
    assert session_state(resumed, live=True) == "running"


def test_list_sessions_newest_first_with_state(tmp_path: Path) -> None:
    write(
        tmp_path / "old.jsonl",
        [start("old", "first task", T0), SessionEndRecord(stop_reason="end_turn")],
    )
    write(tmp_path / "crashed.jsonl", [start("crashed", "second task", T0.replace(hour=5))])
    write(tmp_path / "live.jsonl", [start("live", "third task", T0.replace(hour=7))])
    write(
        tmp_path / "asked.jsonl",
        [start("asked", "fourth", T0.replace(hour=6)), SessionEndRecord(stop_reason="cancelled")],
    )
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not a transcript")
    damaged = tmp_path / "damaged.jsonl"
    write(damaged, [start("damaged")])
    with damaged.open("ab") as f:
        f.write(b"garbage\n")
    write(damaged, [SessionEndRecord(stop_reason="end_turn")])

    sessions = list_sessions(tmp_path, live={"live"})

    assert [(s.session_id, s.task, s.state) for s in sessions] == [
        ("live", "third task", "running"),
        ("asked", "fourth", "cancelled"),
        ("crashed", "second task", "interrupted"),
        ("old", "first task", "end_turn"),
    ]
    assert sessions[-1].path == tmp_path / "old.jsonl"
    assert sessions[-1].started == T0
    assert sessions[-1].workflow == "default"
    assert sessions[-1].model == "local/qwen2.5-coder-1.5b"


def test_list_sessions_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert list_sessions(tmp_path / "nowhere") == []
