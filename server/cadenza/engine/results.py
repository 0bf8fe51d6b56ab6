"""How a movement ends: the ``MovementResult`` union, the one overflow policy, stop reasons."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cadenza.engine.workflows import Movement
from cadenza.types import StopReason

CompleteStatus = Literal["done", "needs_user_input", "failed"]


@dataclass(frozen=True, kw_only=True)
class NextMovement:
    """Go on with another movement of the workflow."""

    kind: Literal["next"] = "next"
    movement: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class Completed:
    """The workflow ended through ``complete`` (or a final answer / ``COMPLETE`` default).

    For ``needs_user_input`` both ``missing_info`` and ``why_no_default`` are non-empty.
    """

    kind: Literal["complete"] = "complete"
    status: CompleteStatus
    summary: str
    missing_info: str | None = None
    why_no_default: str | None = None


@dataclass(frozen=True, kw_only=True)
class Aborted:
    """The workflow stopped without success (``ABORT``, or a context overflow)."""

    kind: Literal["abort"] = "abort"
    reason: str


@dataclass(frozen=True, kw_only=True)
class AskPerson:
    """``default_next = "ASK"``: the movement ran out without deciding; ask the person."""

    kind: Literal["ask"] = "ask"
    reason: str


@dataclass(frozen=True, kw_only=True)
class WaitingHuman:
    """A person must act in the browser before the movement can go on."""

    kind: Literal["waiting_human"] = "waiting_human"
    wait_reason: str
    browser_session_id: str
    url: str | None = None
    act_url: str | None = None


MovementResult = NextMovement | Completed | Aborted | AskPerson | WaitingHuman


def follow_default(movement: Movement, reason: str, summary: str = "") -> MovementResult:
    """The result of leaving ``movement`` through its ``default_next``.

    Used when its steps ran out, or the model ended its turn without a control call.
    """
    target = movement.default_next
    if target == "COMPLETE":
        return Completed(status="done", summary=summary or reason)
    if target == "ASK":
        return AskPerson(reason=reason)
    if target == "ABORT":
        return Aborted(reason=reason)
    return NextMovement(movement=target, reason=reason)


def overflow_exit(movement: Movement, reason: str) -> MovementResult:
    """The one policy for every context-overflow forced exit (DESIGN §2 item 5).

    A terminal ``default_next`` (``COMPLETE`` or ``ASK``) becomes ``ABORT``: compromised
    context must never look like success. A movement name stays (the next movement starts
    from a compacted history).
    """
    why = f"context overflow in movement {movement.name!r}: {reason}"
    if movement.default_next in {"COMPLETE", "ASK", "ABORT"}:
        return Aborted(reason=why)
    return NextMovement(movement=movement.default_next, reason=why)


def stop_reason_of(result: MovementResult) -> StopReason:
    """The session's stop reason when ``result`` ends the workflow."""
    if isinstance(result, Completed):
        return {"done": "end_turn", "failed": "failed", "needs_user_input": "needs_user_input"}[
            result.status
        ]  # type: ignore[return-value]
    if isinstance(result, Aborted):
        return "aborted"
    if isinstance(result, AskPerson):
        return "needs_user_input"
    if isinstance(result, WaitingHuman):
        return "waiting_human"
    raise ValueError(f"{result!r} does not end a workflow")


def result_message(result: MovementResult) -> str:
    """The person-facing text of a final result."""
    if isinstance(result, Completed):
        return result.summary
    if isinstance(result, Aborted | AskPerson):
        return result.reason
    if isinstance(result, WaitingHuman):
        return result.wait_reason
    return result.reason
