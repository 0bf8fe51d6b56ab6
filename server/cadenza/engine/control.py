"""Control tools ``transition`` and ``complete``: how a movement ends.

They are offered in every movement beside the workspace tools, but the engine answers them
itself: a valid call becomes a ``MovementResult``; an invalid one (an unknown movement, a
``needs_user_input`` without both ``missing_info`` and ``why_no_default``) is an error result the
model reads and corrects. Either way the call gets its ``tool`` message at once, so no control
call is ever left dangling.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cadenza.engine.results import MovementResult, NextMovement, ended
from cadenza.engine.workflows import Workflow
from cadenza.messages import ToolCall, ToolSpec
from cadenza.tools.base import strip_titles
from cadenza.tools.dispatch.execution import format_validation


class TransitionArgs(BaseModel):
    """Arguments of ``transition``."""

    model_config = ConfigDict(extra="forbid")

    next: str = Field(description="The movement to go to.")
    reason: str = Field(description="Why; what the next movement should know.")


class CompleteArgs(BaseModel):
    """Arguments of ``complete``."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["done", "needs_user_input", "failed"]
    summary: str = Field(description="What was done, or why not.")
    missing_info: str | None = Field(
        default=None, description="needs_user_input only: what you need from the person."
    )
    why_no_default: str | None = Field(
        default=None, description="needs_user_input only: why no reasonable default exists."
    )


TRANSITION = "transition"
COMPLETE = "complete"
CONTROL_TOOLS = frozenset({TRANSITION, COMPLETE})


@functools.cache
def tool_schema(model: type[BaseModel]) -> dict[str, object]:
    """The argument model's JSON Schema, built once (pydantic takes ~1 ms); read it only."""
    schema: dict[str, object] = strip_titles(model.model_json_schema())
    schema.pop("description", None)
    return schema


def control_specs(workflow: Workflow) -> list[ToolSpec]:
    """The control tools as offered to the model in ``workflow``."""
    names = ", ".join(workflow.movement_names)
    return [
        ToolSpec(
            name=TRANSITION,
            description=f"End this movement and go to another one of: {names}.",
            parameters=tool_schema(TransitionArgs),
        ),
        ToolSpec(
            name=COMPLETE,
            description=(
                "End the whole task: status done (with a summary), failed, or "
                "needs_user_input (only with missing_info and why_no_default)."
            ),
            parameters=tool_schema(CompleteArgs),
        ),
    ]


@dataclass(frozen=True, kw_only=True)
class ControlDecision:
    """The answer to a control call: the tool message text, and the result when accepted."""

    content: str
    result: MovementResult | None

    @property
    def is_error(self) -> bool:
        """True when the call was rejected back to the model."""
        return self.result is None


def _reject(message: str) -> ControlDecision:
    return ControlDecision(content=message, result=None)


def parse_args(call: ToolCall, model: type[BaseModel]) -> BaseModel | str:
    """``call``'s arguments as ``model``, or the error the model reads."""
    try:
        raw = json.loads(call.arguments) if call.arguments.strip() else {}
        return model.model_validate(raw)
    except ValueError as exc:  # JSONDecodeError and ValidationError are both ValueErrors
        if isinstance(exc, ValidationError):
            return format_validation(exc)
        return f"arguments are not valid JSON ({exc})"


def decide(call: ToolCall, workflow: Workflow) -> ControlDecision:
    """Answer a ``transition`` or ``complete`` call.

    Raises:
        ValueError: ``call`` is not a control tool (a programming error).
    """
    if call.name == TRANSITION:
        args = parse_args(call, TransitionArgs)
        if isinstance(args, str):
            return _reject(f"invalid arguments for transition: {args}")
        assert isinstance(args, TransitionArgs)
        if workflow.movement(args.next) is None:
            names = ", ".join(workflow.movement_names)
            return _reject(f"{args.next!r} is not a movement of this workflow; use one of: {names}")
        return ControlDecision(
            content=f"transition to {args.next!r} accepted",
            result=NextMovement(movement=args.next, reason=args.reason),
        )
    if call.name == COMPLETE:
        args = parse_args(call, CompleteArgs)
        if isinstance(args, str):
            return _reject(f"invalid arguments for complete: {args}")
        assert isinstance(args, CompleteArgs)
        return _decide_complete(args)
    raise ValueError(f"{call.name!r} is not a control tool")


def _decide_complete(args: CompleteArgs) -> ControlDecision:
    if args.status == "needs_user_input":
        missing = (args.missing_info or "").strip()
        why = (args.why_no_default or "").strip()
        if not missing or not why:
            return _reject(
                "complete(status=needs_user_input) needs both missing_info (what you need from "
                "the person) and why_no_default (why no reasonable default exists), as non-empty "
                "strings. If a reasonable default exists, use it and go on instead of asking."
            )
        result = ended("needs_user_input", args.summary, missing_info=missing, why_no_default=why)
    else:
        result = ended("end_turn" if args.status == "done" else "failed", args.summary)
    return ControlDecision(content=f"complete({args.status}) accepted", result=result)
