"""Run a session, wait for the person, resume: the same loop for every face.

A run that stops waiting for the person (``needs_user_input``, ``waiting_human``) need not
end the session's task: the face asks the person in its own way and the session resumes in
the same conversation with the answer (None: the person declined, the session ends
cancelled). ``settle`` is that loop; which stops are asked within the task is the face's
choice (``PersonPort.asks``: over ACP a question ends the prompt turn, its answer being the
next prompt, while a browser wait is asked within the turn).

``drive`` is the life of a session as one task (``LiveSession``): its first run (its start,
its next turn, a reply, or a wait it was revived in), every wait the face asks about and its
resume, until its turn ends (an end the face does not ask about).
While it waits it takes an answer from the face's prompt or from a reply command, whichever
comes first (``LiveSession.give_reply``); the other prompt is withdrawn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Protocol, TypeVar

from cadenza.engine.session import Session
from cadenza.host.live import LiveSession, Reply
from cadenza.schema.outcome import SessionOutcome

log = logging.getLogger(__name__)

RESOURCE_CLOSE_S = 5.0
"""Seconds to wait for a session's browser sessions to close when it ends."""

F = TypeVar("F")
Step = Callable[[], Awaitable[SessionOutcome]]
"""One run of the session: ``Session.run`` or a ``Session.resume`` with an answer."""


async def settle(
    session: Session,
    outcome: SessionOutcome,
    *,
    waits: Callable[[SessionOutcome], bool],
    ask: Callable[[SessionOutcome], Awaitable[Reply]],
    run: Callable[[Step], Awaitable[SessionOutcome]],
) -> SessionOutcome:
    """Ask and resume while ``outcome`` waits for the person; the first outcome that does not.

    Args:
        session: The session.
        outcome: How its latest run ended.
        waits: Whether an outcome is asked about here (else it is returned).
        ask: Asks the person; their answer, or None to end the session cancelled.
        run: Runs one step (a face may wrap it, e.g. in progress).
    """
    while waits(outcome):
        answer = await ask(outcome)
        if answer is None:
            session.end_cancelled()
            return session.last or outcome
        outcome = await run(partial(session.resume, answer))
    return outcome


class PersonPort(Protocol[F]):
    """How a face shows a live session's runs and asks its person."""

    def asks(self, outcome: SessionOutcome) -> bool:
        """Whether the face asks the person about this wait within the task (else it ends)."""
        ...

    async def before_run(self, live: LiveSession[F]) -> None:
        """Prepare the face for a run (e.g. open its work-done progress)."""
        ...

    async def prompt(self, live: LiveSession[F], outcome: SessionOutcome) -> None:
        """Ask the person once; an answer goes to ``live.give_reply``."""
        ...


async def drive(
    live: LiveSession[F],
    port: PersonPort[F],
    *,
    first: Step | None = None,
    waiting: SessionOutcome | None = None,
) -> SessionOutcome:
    """Run ``live`` until its turn ends: an end that is no wait ``port`` asks about.

    Args:
        live: The session.
        port: The face's progress and prompts.
        first: Its first run (default ``Session.run``; a revived session: its next turn, or
            the reply that revived it).
        waiting: Start by waiting (a revived session that waits for the person).
    """
    run = partial(_run, live, port)
    try:
        if waiting is not None:
            outcome = waiting
        else:
            outcome = await run(first or live.session.run)
        outcome = await settle(
            live.session,
            outcome,
            waits=lambda o: o.waiting and port.asks(o),
            ask=partial(_wait, live, port),
            run=run,
        )
        live.outcome, live.state = outcome, outcome.stop_reason
        return outcome
    except asyncio.CancelledError:
        if live.state != "running" and live.cancel_requested:
            live.session.end_cancelled()  # cancelled while waiting: it ends now
        raise
    finally:
        await _release(live)


async def _run(live: LiveSession[F], port: PersonPort[F], step: Step) -> SessionOutcome:
    """One run, after the face prepared for it."""
    live.state = "running"
    try:
        await port.before_run(live)
    except asyncio.CancelledError:
        live.session.end_before_start()  # the transcript records the end too
        raise
    return await step()


async def _wait(live: LiveSession[F], port: PersonPort[F], outcome: SessionOutcome) -> Reply:
    """Prompt the person and wait for the prompt's answer or a reply command."""
    live.outcome, live.state = outcome, outcome.stop_reason
    answered = live.expect_reply()
    prompt = asyncio.create_task(port.prompt(live, outcome))
    try:
        return await answered
    finally:
        live.stop_expecting()
        prompt.cancel()  # withdraws an unanswered prompt


async def _release(live: LiveSession[F]) -> None:
    """Close the session's resources and its transcript."""
    try:
        await asyncio.wait_for(asyncio.shield(live.session.aclose()), RESOURCE_CLOSE_S)
    except TimeoutError:
        log.warning("session %s: its resources did not close in time", live.session_id)
    except asyncio.CancelledError:
        log.info("session %s: the server stopped while its resources closed", live.session_id)
    except Exception:
        log.exception("session %s: closing its resources failed", live.session_id)
    if live.recorder is not None:
        live.recorder.close()
