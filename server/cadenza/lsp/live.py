"""How an LSP client sees a live session's runs and is asked when the session waits.

The host drives the session (``host.driver.drive``); this port gives each run its own
work-done progress (cancellable from the editor) and, when a run stops with
``needs_user_input`` or ``waiting_human``, prompts the person (``prompts.ask`` /
``prompts.confirm_human``). The session also takes ``cadenza.replySession`` meanwhile;
whichever answers first resumes it, and the other prompt is withdrawn (``$/cancelRequest``).
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from cadenza.host.live import LiveSession
from cadenza.lsp import prompts
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.progress import SessionProgress
from cadenza.lsp.publisher import SessionPublisher
from cadenza.schema.outcome import SessionOutcome

log = logging.getLogger(__name__)

LspLive = LiveSession[SessionPublisher]
"""A live session of this server: its publisher is the face's part."""


class LspPerson:
    """The person behind an LSP client, for one drive of a session (``host.driver.PersonPort``).

    Args:
        server: The language server (prompts and progress go to its client).
        work_done_token: The client's token for the first run's progress, if any.
        message: The first run's progress message (default: the session's task).
    """

    def __init__(
        self,
        server: LanguageServer,
        work_done_token: types.ProgressToken | None = None,
        message: str | None = None,
    ) -> None:
        self._server = server
        self._token = work_done_token
        self._message = message

    def asks(self, outcome: SessionOutcome) -> bool:
        """Every wait: a question or a browser wait does not end the session's task."""
        return outcome.waiting

    async def before_run(self, live: LspLive) -> None:
        """Open the run's work-done progress; cancelling it cancels the session."""
        token, self._token = self._token, None
        message, self._message = self._message or live.session.task, None
        features = ClientFeatures.of(self._server.client_capabilities)
        try:
            progress = await SessionProgress.open(
                self._server,
                client_token=token,
                may_create=features.work_done_progress,
                message=message,
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            # e.g. a workDoneToken that is not an integer or a string: no progress, but the
            # session runs (and ends with session_end) instead of failing silently.
            log.exception("session %s runs without progress", live.session_id)
            progress = None
        live.face.progress = progress
        if progress is not None:

            def cancel() -> None:
                live.cancel()

            progress.on_cancel(cancel)

    async def prompt(self, live: LspLive, outcome: SessionOutcome) -> None:
        """Ask once; an answer resumes, a dismissal leaves the reply to ``replySession``."""
        try:
            if outcome.stop_reason == "waiting_human":
                action = await prompts.confirm_human(
                    self._server,
                    session_id=live.session_id,
                    wait_reason=outcome.message,
                    uri=outcome.act_url,
                )
                if action is not None:
                    live.give_reply("" if action == "continue" else None)
                    return
            else:
                answer = await prompts.ask(
                    self._server,
                    session_id=live.session_id,
                    question=outcome.missing_info or outcome.message,
                    why_no_default=outcome.why_no_default,
                )
                if answer:
                    live.give_reply(answer)
                    return
        except prompts.PromptError as exc:
            log.warning("session %s: %s", live.session_id, exc)
        live.face.log("waiting for the person: answer with cadenza.replySession")
