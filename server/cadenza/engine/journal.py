"""The transcript as a session ``Recorder``: every message, event and checkpoint, as JSONL."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.events import SessionEvent, SessionFinished
from cadenza.engine.transcript import (
    CheckpointRecord,
    EventRecord,
    MessageRecord,
    SessionEndRecord,
    SessionStartRecord,
    TurnRecord,
)
from cadenza.engine.transcript_writer import TranscriptWriter
from cadenza.messages import Message


class TranscriptRecorder:
    """Appends a session's records to its transcript file, flushed per record.

    fsync'd once per step: the ``step`` event (the first record of a step, written before the
    model request) starts a background fsync of everything before it; checkpoints and the
    session's end sync at once.
    """

    def __init__(self, writer: TranscriptWriter) -> None:
        self.writer = writer

    @classmethod
    def start(
        cls,
        *,
        session_id: str,
        task: str,
        root: Path,
        workflow: str,
        model: str,
        directory: Path | None = None,
    ) -> TranscriptRecorder:
        """Open the session's transcript and write its ``session_start`` record.

        Raises:
            OSError: The state folder cannot be written.
            ValueError: ``session_id`` is not a safe file name.
        """
        writer = TranscriptWriter.for_session(session_id, directory)
        writer.append(
            SessionStartRecord(
                session_id=session_id, task=task, root=str(root), workflow=workflow, model=model
            )
        )
        return cls(writer)

    @classmethod
    def reopen(cls, session_id: str, directory: Path | None = None) -> TranscriptRecorder:
        """Append to an existing session's transcript (a resumed session; no new start record).

        Raises:
            OSError: The file cannot be opened.
            ValueError: ``session_id`` is not a safe file name.
        """
        return cls(TranscriptWriter.for_session(session_id, directory))

    def on_message(self, message: Message) -> None:
        """Record a message appended to the live history."""
        self.writer.append(MessageRecord(message=message), sync=False)

    def on_turn(self, turn: int, text: str) -> None:
        """Record that the person's ``turn`` starts with the next message; their own words."""
        self.writer.append(TurnRecord(turn=turn, text=text), sync=False)

    def on_event(self, event: SessionEvent) -> None:
        """Record an event; ``session_end`` also closes the transcript's session."""
        if event.kind == "agent_message_chunk":
            return  # the whole reply is recorded as a message; chunks would double it
        self.writer.append(EventRecord(event=event), sync=False)
        if event.kind == "step":
            self.writer.sync(wait=False)  # the disk works while the model request goes out
        if isinstance(event, SessionFinished):
            self.writer.append(
                SessionEndRecord(stop_reason=event.stop_reason, message=event.message)
            )

    def on_checkpoint(self, movement: str, note: str) -> None:
        """Record a movement's memory checkpoint."""
        self.writer.append(CheckpointRecord(movement=movement, note=note))

    def close(self) -> None:
        """Close the file (idempotent)."""
        self.writer.close()
