"""Sessions created by ``session/new`` and never prompted, remembered across agent restarts.

A session's transcript starts with its first prompt (the prompt is the task), so a session
that was only created has nothing stored, and a client that creates a session in one agent
process and prompts it in the next (acpx: ``sessions new``, then ``prompt``) could not load it.
Its workspace and mode are kept in ``<sessionId>.unprompted.json`` next to the transcripts
until the transcript exists; ``session/load`` then takes the session up as new.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from cadenza.host.stored import beside_transcript
from cadenza.textio import write_atomic

log = logging.getLogger(__name__)

SUFFIX = ".unprompted.json"


@dataclass(frozen=True)
class Unprompted:
    """A created session's workspace and the workflow (mode) it will run."""

    root: Path
    workflow: str


def _path(session_id: str) -> Path:
    """Raises ValueError for an unsafe id."""
    return beside_transcript(session_id, SUFFIX)


def remember(session_id: str, root: Path, workflow: str) -> None:
    """Keep a new session's workspace and mode (a failure is logged: the session still works)."""
    try:
        path = _path(session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"root": str(root), "workflow": workflow}
        write_atomic(path, json.dumps(data).encode("utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("session %s: it cannot be loaded before its first prompt: %s", session_id, exc)


def recall(session_id: str) -> Unprompted | None:
    """The remembered session; None when unknown, unsafe, or unreadable."""
    try:
        data = json.loads(_path(session_id).read_text(encoding="utf-8"))
        return Unprompted(root=Path(data["root"]), workflow=str(data["workflow"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget(session_id: str) -> None:
    """Drop the record once the session has a transcript."""
    try:
        _path(session_id).unlink(missing_ok=True)
    except (OSError, ValueError) as exc:
        log.warning("session %s: %s", session_id, exc)
