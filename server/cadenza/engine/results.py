"""How a movement ends: the ``MovementResult`` union and the one overflow policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cadenza.engine.workflows import Movement
from cadenza.schema.outcome import SessionOutcome
from cadenza.types import StopReason


@dataclass(frozen=True, kw_only=True)
class NextMovement:
    """Go on with another movement of the workflow."""

    kind: Literal["next"] = "next"
    movement: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class Ended:
    """The workflow ended, or waits for the person: how, as the session's ``SessionOutcome``.

    From ``complete`` (or a final answer, a ``COMPLETE`` default): ``end_turn``, ``failed`` or
    ``needs_user_input`` (then with ``missing_info`` and ``why_no_default``); from ``ABORT`` or
    a context overflow: ``aborted``; from an ``ASK`` default: ``needs_user_input``; from a
    person to act in the browser: ``waiting_human``. ``outcome.steps`` is left for the session
    to fill in.
    """

    kind: Literal["end"] = "end"
    outcome: SessionOutcome

    @property
    def claims_done(self) -> bool:
        """The model (or a ``COMPLETE`` default) says the task is done: checked before it stands."""
        return self.outcome.stop_reason == "end_turn"


MovementResult = NextMovement | Ended


def ended(
    stop_reason: StopReason,
    message: str,
    *,
    missing_info: str | None = None,
    why_no_default: str | None = None,
) -> Ended:
    """An ``Ended`` with this outcome (a question says what is missing and why no default)."""
    outcome = SessionOutcome(
        stop_reason=stop_reason,
        message=message,
        missing_info=missing_info,
        why_no_default=why_no_default,
    )
    return Ended(outcome=outcome)


def follow_default(movement: Movement, reason: str, summary: str = "") -> MovementResult:
    """The result of leaving ``movement`` through its ``default_next``.

    Used when its steps ran out, or the model ended its turn without a control call.
    """
    target = movement.default_next
    if target == "COMPLETE":
        return ended("end_turn", summary or reason)
    if target == "ASK":
        return ended("needs_user_input", reason, missing_info=reason)
    if target == "ABORT":
        return ended("aborted", reason)
    return NextMovement(movement=target, reason=reason)


def overflow_exit(movement: Movement, reason: str) -> MovementResult:
    """The one policy for every context-overflow forced exit.

    A terminal ``default_next`` (``COMPLETE`` or ``ASK``) becomes ``ABORT``: compromised
    context must never look like success. A movement name stays (the next movement starts
    from a compacted history).
    """
    why = f"context overflow in movement {movement.name!r}: {reason}"
    if movement.default_next in {"COMPLETE", "ASK", "ABORT"}:
        return ended("aborted", why)
    return NextMovement(movement=movement.default_next, reason=why)
