"""Each session's transcript, kept so that a disk problem never fails the session.

Transcripts are the engine's JSONL files (``cadenza.engine.journal``), one per session in
``<user state dir>/sessions/<sessionId>.jsonl`` (platformdirs; ``$XDG_STATE_HOME/cadenza`` on
Linux). A transcript is a record of the session, not a part of it: when the file cannot be
opened the session runs without one, and when a write fails later (disk full, folder removed)
the transcript stops there with a warning while the session goes on.

The recorder also numbers the person's turns: each message the person wrote (the task, an
answer, a follow-up) starts one, recorded with their own words (``TurnRecord``), which the
face gives beforehand (``said``) when the message the model gets is more than them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cadenza.engine.events import SessionEvent
from cadenza.engine.journal import TranscriptRecorder
from cadenza.messages import Message, UserMessage, from_person


class GuardedRecorder:
    """A ``TranscriptRecorder`` whose failures are logged once and then ignored.

    Implements the engine's ``Recorder`` protocol.

    Args:
        recorder: The open transcript.
        warn: Called once with a sentence for the person when the transcript stops.
    """

    def __init__(self, recorder: TranscriptRecorder, warn: Callable[[str], None]) -> None:
        self.recorder = recorder
        self._warn = warn
        self.failed = False
        self.turns = 0
        """The person's turns so far (a revived session starts from its transcript's count)."""
        self.on_turn: Callable[[int], None] | None = None
        """Told each new turn's number (the checkpoint marks the files' states there)."""
        self._said: str | None = None

    @property
    def path(self) -> Path:
        """The transcript file."""
        return self.recorder.writer.path

    def _guard(self, write: Callable[[], None]) -> None:
        if self.failed:
            return
        try:
            write()
        except (OSError, ValueError) as exc:
            self.failed = True
            self.recorder.close()
            self._warn(f"the transcript {self.path} stopped: {exc}")

    def said(self, text: str) -> None:
        """The person's own words of the turn about to start (else its message's text)."""
        self._said = text

    def on_message(self, message: Message) -> None:
        """Record a message appended to the live history (a person's: a new turn first)."""
        if isinstance(message, UserMessage) and from_person(message):
            self.turns += 1
            turn, words, self._said = self.turns, self._said or message.content, None
            self._guard(lambda: self.recorder.on_turn(turn, words))
            if self.on_turn is not None:
                self.on_turn(turn)
        self._guard(lambda: self.recorder.on_message(message))

    def on_event(self, event: SessionEvent) -> None:
        """Record a published event."""
        self._guard(lambda: self.recorder.on_event(event))

    def on_checkpoint(self, movement: str, note: str) -> None:
        """Record a movement's memory checkpoint."""
        self._guard(lambda: self.recorder.on_checkpoint(movement, note))

    def close(self) -> None:
        """Close the file (idempotent)."""
        self.recorder.close()


def open_transcript(
    *,
    session_id: str,
    task: str,
    root: Path,
    workflow: str,
    model: str,
    warn: Callable[[str], None],
    directory: Path | None = None,
) -> GuardedRecorder | None:
    """Open the session's transcript and write its ``session_start`` record.

    Args:
        session_id: The session's id (the file name).
        task: The task, as given.
        root: The workspace root.
        workflow: The workflow's name.
        model: The resolved model name (``PROVIDER/MODEL``).
        warn: Told why, when the transcript cannot be opened or stops later.
        directory: The transcript folder (default: ``<user state dir>/sessions``).

    Returns:
        The recorder to pass to the session, or None when the file cannot be opened (then
        ``warn`` was called and the session runs without a transcript).
    """
    try:
        recorder = TranscriptRecorder.start(
            session_id=session_id,
            task=task,
            root=root,
            workflow=workflow,
            model=model,
            directory=directory,
        )
    except (OSError, ValueError) as exc:
        warn(f"the session runs without a transcript: {exc}")
        return None
    return GuardedRecorder(recorder, warn)


def reopen_transcript(
    session_id: str, warn: Callable[[str], None], directory: Path | None = None
) -> GuardedRecorder | None:
    """Append to a stored session's transcript (it resumes after a restart).

    Returns:
        The recorder, or None when the file cannot be opened (``warn`` was called).
    """
    try:
        recorder = TranscriptRecorder.reopen(session_id, directory)
    except (OSError, ValueError) as exc:
        warn(f"the session goes on without a transcript: {exc}")
        return None
    return GuardedRecorder(recorder, warn)
