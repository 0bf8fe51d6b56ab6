"""One session alive in this server: its run, its waits for the person, its resumes.

A live session runs as one asyncio task (``drive``) from its start (or revival) until it ends
for good. When a run stops with ``needs_user_input`` or ``waiting_human`` the task stays and
waits: it prompts the person (``prompts.ask`` / ``prompts.confirm_human``) and, at the same
time, accepts ``cadenza.replySession``; whichever answers first resumes the session in the
same conversation, and the other prompt is withdrawn. Each run gets its own work-done
progress. A waiting session keeps its state (and its browser sessions) until it resumes,
is cancelled, or the server stops; in the last case its transcript still ends with the
waiting ``session_end``, so it can be continued after a restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from cadenza.engine.session import Session, SessionOutcome
from cadenza.engine.session_list import SessionState
from cadenza.engine.session_lock import SessionLock
from cadenza.lsp import prompts
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.progress import SessionProgress
from cadenza.lsp.publisher import SessionPublisher
from cadenza.lsp.transcripts import GuardedRecorder

log = logging.getLogger(__name__)

RESOURCE_CLOSE_S = 5.0
"""Seconds to wait for a session's browser sessions to close when it ends."""

Reply = str | None
"""What resumes a waiting session: the person's text; None means "cancel the session"."""


@dataclass(kw_only=True)
class LiveSession:
    """A session running or waiting in this server.

    Attributes:
        session: The engine session.
        publisher: Its updates, progress and log.
        recorder: Its transcript (None: none could be opened).
        root: Its workspace root.
        model: ``PROVIDER/MODEL``.
        started: When it started (UTC).
        state: ``running``, or the waiting stop reason while it waits.
        outcome: How its latest run ended (None while the first run runs).
        task: The asyncio task that drives it.
        cancel_requested: Set by ``cadenza.cancelSession`` (not by a server shutdown).
    """

    session: Session
    publisher: SessionPublisher
    recorder: GuardedRecorder | None
    root: Path
    model: str
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    state: SessionState = "running"
    outcome: SessionOutcome | None = None
    task: asyncio.Task[SessionOutcome] | None = None
    cancel_requested: bool = False
    lock: SessionLock | None = None
    """Held while the session lives in this server (no other server runs it meanwhile)."""
    _reply: asyncio.Future[Reply] | None = None

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.session.session_id

    @property
    def waiting(self) -> bool:
        """True while it waits for the person."""
        return self._reply is not None and not self._reply.done()

    def give_reply(self, reply: Reply) -> bool:
        """Resume a waiting session with ``reply``; False when it is not waiting."""
        if self._reply is None or self._reply.done():
            return False
        self._reply.set_result(reply)
        return True

    def cancel(self) -> bool:
        """Cancel the session (``cadenza.cancelSession``); False when it is over."""
        if self.task is None or self.task.done():
            return False
        self.cancel_requested = True
        self.task.cancel()
        return True


class SessionDriver:
    """Runs live sessions: each run with its progress, each wait with its prompt.

    Args:
        server: The language server (prompts and progress go to its client).
    """

    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    async def drive(
        self,
        live: LiveSession,
        *,
        work_done_token: types.ProgressToken | None = None,
        reply: str | None = None,
        waiting: SessionOutcome | None = None,
    ) -> SessionOutcome:
        """Run ``live`` until it ends for good.

        Args:
            live: The session.
            work_done_token: The client's token for the first run's progress.
            reply: Resume with this reply at once (a session revived by a reply).
            waiting: Start by waiting (a revived session that waits for the person).
        """
        try:
            if waiting is not None:
                outcome = waiting
            elif reply is not None:
                outcome = await self._run(live, None, partial(live.session.resume, reply))
            else:
                outcome = await self._run(live, work_done_token, live.session.run)
            while outcome.waiting:
                live.outcome, live.state = outcome, outcome.stop_reason
                answer = await self._wait(live, outcome)
                if answer is None:
                    live.session.end_cancelled()
                    return live.session.last or outcome
                outcome = await self._run(live, None, partial(live.session.resume, answer))
            live.outcome, live.state = outcome, outcome.stop_reason
            return outcome
        except asyncio.CancelledError:
            if live.state != "running" and live.cancel_requested:
                live.session.end_cancelled()  # cancelled while waiting: it ends now
            raise
        finally:
            await self._release(live)

    async def _run(
        self,
        live: LiveSession,
        token: types.ProgressToken | None,
        run: Callable[[], Awaitable[SessionOutcome]],
    ) -> SessionOutcome:
        """One run with its own work-done progress (cancellable from the editor)."""
        live.state = "running"
        features = ClientFeatures.of(self._server.client_capabilities)
        try:
            progress = await SessionProgress.open(
                self._server,
                client_token=token,
                may_create=features.work_done_progress,
                message=live.session.task,
            )
        except asyncio.CancelledError:
            live.session.end_before_start()  # the transcript records the end too
            raise
        except Exception:
            # e.g. a workDoneToken that is not an integer or a string: no progress, but the
            # session runs (and ends with session_end) instead of failing silently.
            log.exception("session %s runs without progress", live.session.session_id)
            progress = None
        live.publisher.progress = progress
        if progress is not None:

            def cancel() -> None:
                live.cancel()

            progress.on_cancel(cancel)
        return await run()

    async def _wait(self, live: LiveSession, outcome: SessionOutcome) -> Reply:
        """Prompt the person and wait for the prompt's answer or ``cadenza.replySession``."""
        live._reply = asyncio.get_running_loop().create_future()
        prompt = asyncio.create_task(self._prompt(live, outcome))
        try:
            return await live._reply
        finally:
            live._reply = None
            prompt.cancel()  # withdraws an unanswered prompt ($/cancelRequest)

    async def _prompt(self, live: LiveSession, outcome: SessionOutcome) -> None:
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
        live.publisher.log("waiting for the person: answer with cadenza.replySession")

    async def _release(self, live: LiveSession) -> None:
        """Close the session's resources and its transcript."""
        try:
            await asyncio.wait_for(asyncio.shield(live.session.aclose()), RESOURCE_CLOSE_S)
        except (TimeoutError, asyncio.CancelledError):
            log.warning("session %s: its browser sessions did not close in time", live.session_id)
        except Exception:
            log.exception("session %s: closing its resources failed", live.session_id)
        if live.recorder is not None:
            live.recorder.close()
