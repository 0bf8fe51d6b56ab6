"""Sends a session's events to the client, in order, as they happen.

``publish`` is synchronous and writes each notification at once (pygls ``protocol.notify``
writes to the transport before returning), so the client sees events exactly in the order the
engine produced them: no task per notification that could reorder them.
"""

from __future__ import annotations

from pathlib import Path

from pygls.lsp.server import LanguageServer

from cadenza.engine.events import SessionEvent, SessionFinished
from cadenza.lsp.params import SESSION_UPDATE
from cadenza.lsp.progress import SessionProgress
from cadenza.lsp.updates import (
    SessionUpdateParams,
    progress_end,
    progress_report,
    session_update,
)


class SessionPublisher:
    """``cadenza/sessionUpdate`` notifications and progress for one session."""

    def __init__(self, server: LanguageServer, *, session_id: str, root: Path) -> None:
        self._server = server
        self.session_id = session_id
        self.root = root
        self.progress: SessionProgress | None = None

    def publish(self, event: SessionEvent) -> None:
        """Send the progress message and the session update of ``event``, in that order."""
        if self.progress is not None:
            if isinstance(event, SessionFinished):
                self.progress.end(progress_end(event))
            elif (message := progress_report(event)) is not None:
                self.progress.report(message)
        update = session_update(event, self.root)
        if update is not None:
            params = SessionUpdateParams(session_id=self.session_id, update=update)
            self._server.protocol.notify(SESSION_UPDATE, params.wire())
