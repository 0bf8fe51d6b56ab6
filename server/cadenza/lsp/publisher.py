"""Sends a session's events to the client, in order, as they happen.

``publish`` is synchronous and writes each notification at once (pygls ``protocol.notify``
writes to the transport before returning), so the client sees events exactly in the order the
engine produced them: no task per notification that could reorder them. One event may give a
progress message, a ``window/logMessage`` line and a ``cadenza/sessionUpdate``, sent in that
order.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from cadenza.host.catalog import missing_local_model
from cadenza.host.ports import MovementStarted, SessionEvent, SessionFinished
from cadenza.lsp.progress import SessionProgress
from cadenza.lsp.updates import log_line, progress_end, progress_report, session_update
from cadenza.schema.methods import PULL_MODEL, SESSION_UPDATE
from cadenza.schema.pickers import SessionFix
from cadenza.schema.updates import SessionEnd, SessionUpdateParams
from cadenza.secrets import redact


class SessionPublisher:
    """``cadenza/sessionUpdate`` notifications, progress and session log for one session.

    Attributes:
        session_id: The session's id (in every update and log line).
        root: The workspace root (diff paths are made absolute against it).
        progress: The session's work-done progress, once opened (None: the client has none).
        movement: The movement that runs now (from the latest ``MovementStarted``).
    """

    def __init__(
        self, server: LanguageServer, *, session_id: str, root: Path, model: str | None = None
    ) -> None:
        self._server = server
        self.session_id = session_id
        self.root = root
        self.model = model
        """``PROVIDER/MODEL`` of the run: an error end offers to pull a local model missing."""
        self.progress: SessionProgress | None = None
        self.movement: str | None = None
        self.cancelled = False
        """Set by a ``session_end`` with ``cancelled``: nothing of the session is sent after."""

    def publish(self, event: SessionEvent) -> None:
        """Send the progress message, the log line and the session update of ``event``.

        After a ``cancelled`` ``session_end`` nothing more is sent (a cancelled session's
        end is its last word, even while its task winds down).
        """
        if self.cancelled:
            return
        if isinstance(event, SessionFinished) and event.stop_reason == "cancelled":
            self.cancelled = True
        if isinstance(event, MovementStarted):
            self.movement = event.movement
        if self.progress is not None:
            if isinstance(event, SessionFinished):
                self.progress.end(progress_end(event))
            elif (message := progress_report(event, self.movement)) is not None:
                self.progress.report(message)
        if (line := log_line(event)) is not None:
            self.log(line)
        update = session_update(event, self.root)
        if isinstance(update, SessionEnd):
            update = with_fix(update, self.model)
        if update is not None:
            params = SessionUpdateParams(session_id=self.session_id, update=update)
            self._server.protocol.notify(SESSION_UPDATE, params.wire())

    def log(self, line: str, level: types.MessageType = types.MessageType.Log) -> None:
        """Send one session-log line (``window/logMessage``), prefixed with the session id.

        Every session-log line leaves here, so secrets are redacted here (``secrets.redact``).
        """
        message = f"session {self.session_id}: {redact(line)}"
        self._server.window_log_message(types.LogMessageParams(type=level, message=message))


def with_fix(end: SessionEnd, model: str | None) -> SessionEnd:
    """``end`` with the ``cadenza.pullModel`` fix when it failed on a local model not pulled."""
    missing = missing_local_model(model) if model and end.stop_reason == "error" else None
    if missing is None:
        return end
    arguments = [{"model": f"local/{missing}"}]
    fix = SessionFix(title="Pull model", command=PULL_MODEL, arguments=arguments)
    return end.model_copy(update={"fix": fix})
