"""Work-done progress for one session (LSP §WorkDoneProgress).

The token is the client's ``workDoneToken`` from ``workspace/executeCommand`` when it sent one
(client-initiated progress), else one the server creates with
``window/workDoneProgress/create`` when the client declared ``window.workDoneProgress``
(server-initiated; ``begin`` may be sent only after the client answered the create request).
A ``window/workDoneProgress/cancel`` for the token cancels the session.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from cadenza.lsp.rpc import shielded

log = logging.getLogger(__name__)

TITLE = "Cadenza"
CREATE_TIMEOUT_S = 10.0
"""Seconds to wait for the client to accept a new token; then the session runs without."""
BEGIN_MESSAGE_CHARS = 200
"""Longest ``begin`` message (the task), in characters."""


class SessionProgress:
    """One session's progress token: ``begin``, ``report``s, then exactly one ``end``."""

    def __init__(self, server: LanguageServer, token: types.ProgressToken) -> None:
        self._server = server
        self.token = token
        self._ended = False

    @classmethod
    async def open(
        cls,
        server: LanguageServer,
        *,
        client_token: types.ProgressToken | None,
        may_create: bool,
        message: str,
    ) -> SessionProgress | None:
        """Obtain a token and send ``begin``; None when the client supports no progress.

        Args:
            server: The server.
            client_token: The ``workDoneToken`` of the command request, if any.
            may_create: The client declared ``window.workDoneProgress``.
            message: The ``begin`` message (the task), cut to ``BEGIN_MESSAGE_CHARS``.

        Raises:
            asyncio.CancelledError: The session was cancelled while the token was created.
        """
        token = client_token
        if token is None:
            if not may_create:
                return None
            token = f"cadenza-{uuid.uuid4().hex}"
            try:
                async with asyncio.timeout(CREATE_TIMEOUT_S):
                    await shielded(server.work_done_progress.create_async(token))
            except (JsonRpcException, TimeoutError) as exc:
                log.warning("no progress: the client did not accept token %s: %r", token, exc)
                return None
        if len(message) > BEGIN_MESSAGE_CHARS:
            message = message[: BEGIN_MESSAGE_CHARS - 1] + "…"
        begin = types.WorkDoneProgressBegin(title=TITLE, message=message, cancellable=True)
        server.work_done_progress.begin(token, begin)
        return cls(server, token)

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the client sends ``window/workDoneProgress/cancel``."""
        future: Future[Any] | None = self._server.work_done_progress.tokens.get(self.token)
        if future is None:
            return

        def fire(done: Future[Any]) -> None:
            if done.cancelled():
                callback()

        future.add_done_callback(fire)

    def report(self, message: str) -> None:
        """Send a ``report`` with ``message`` (ignored after ``end``)."""
        if not self._ended:
            report = types.WorkDoneProgressReport(message=message)
            self._server.work_done_progress.report(self.token, report)

    def end(self, message: str) -> None:
        """Send the ``end`` with ``message`` once, and forget the token."""
        if self._ended:
            return
        self._ended = True
        self._server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self._server.work_done_progress.tokens.pop(self.token, None)
