"""``host.driver.settle``: ask and resume while a run waits; a declined answer ends it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from cadenza.schema.outcome import SessionOutcome


class FakeSession:
    def __init__(self, outcomes: list[SessionOutcome]) -> None:
        self.outcomes = outcomes
        self.replies: list[str] = []
        self.cancelled = False
        self.last: SessionOutcome | None = None

    async def resume(self, reply: str) -> SessionOutcome:
        self.replies.append(reply)
        self.last = self.outcomes.pop(0)
        return self.last

    def end_cancelled(self) -> None:
        self.cancelled = True
        self.last = SessionOutcome(stop_reason="cancelled", message="", steps=0)


def _outcome(reason: Any) -> SessionOutcome:
    return SessionOutcome(stop_reason=reason, message=reason, steps=1)


async def _run(step: Callable[[], Awaitable[SessionOutcome]]) -> SessionOutcome:
    return await step()


async def test_waits_are_asked_and_resumed_until_a_run_does_not_wait() -> None:
    from cadenza.host.driver import settle

    session = FakeSession([_outcome("waiting_human"), _outcome("end_turn")])
    asked: list[str] = []

    async def ask(outcome: SessionOutcome) -> str | None:
        asked.append(outcome.stop_reason)
        return "ok"

    end = await settle(
        session,  # type: ignore[arg-type]
        _outcome("needs_user_input"),
        waits=lambda o: o.waiting,
        ask=ask,
        run=_run,
    )
    assert end.stop_reason == "end_turn"
    assert asked == ["needs_user_input", "waiting_human"]
    assert session.replies == ["ok", "ok"]


async def test_a_declined_answer_ends_the_session_cancelled() -> None:
    from cadenza.host.driver import settle

    session = FakeSession([])

    async def decline(outcome: SessionOutcome) -> str | None:
        return None

    end = await settle(
        session,  # type: ignore[arg-type]
        _outcome("waiting_human"),
        waits=lambda o: o.stop_reason == "waiting_human",
        ask=decline,
        run=_run,
    )
    assert session.cancelled and end.stop_reason == "cancelled"


async def test_an_outcome_the_face_does_not_wait_on_is_returned() -> None:
    from cadenza.host.driver import settle

    session = FakeSession([])

    async def never(outcome: SessionOutcome) -> str | None:
        raise AssertionError("asked")

    end = await settle(
        session,  # type: ignore[arg-type]
        _outcome("needs_user_input"),
        waits=lambda o: o.stop_reason == "waiting_human",
        ask=never,
        run=_run,
    )
    assert end.stop_reason == "needs_user_input"
