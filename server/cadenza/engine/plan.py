"""``update_plan``: the agent's to-do list for a multi-step task.

A control tool like ``transition`` and ``complete``: the engine answers it itself and it never
ends the movement. Each call sends the whole list (ACP's plan rule: a ``plan`` update replaces
the previous one), each entry with its ``content`` and ``status`` (ACP's ``PlanEntry``:
``pending``, ``in_progress``, ``completed``). The list goes to the editor as a ``PlanUpdated``
event. Offered under ``LoopSettings.plan`` only: on a small local model one more schema costs
more than the list is worth.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cadenza.engine.control import parse_args, tool_schema
from cadenza.engine.events import PlanEntry, PlanUpdated
from cadenza.messages import ToolCall, ToolSpec

UPDATE_PLAN = "update_plan"
MAX_ENTRIES = 50
"""More entries than a person reads; a longer list is an error the model corrects."""


class PlanItemArgs(BaseModel):
    """One step of the plan as the model writes it."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=500, description="The step, in a few words.")
    status: Literal["pending", "in_progress", "completed"]


class UpdatePlanArgs(BaseModel):
    """Arguments of ``update_plan``: the whole list, in order."""

    model_config = ConfigDict(extra="forbid")

    entries: list[PlanItemArgs] = Field(max_length=MAX_ENTRIES)


def plan_spec() -> ToolSpec:
    """``update_plan`` as offered to the model."""
    return ToolSpec(
        name=UPDATE_PLAN,
        description=(
            "Keep a to-do list for a task of several steps (skip it for a one-step task). "
            "Send the whole list each time; mark one step in_progress while you work on it "
            "and completed once it is done."
        ),
        parameters=tool_schema(UpdatePlanArgs),
    )


def decide_plan(call: ToolCall) -> tuple[str, PlanUpdated | None]:
    """The tool message for an ``update_plan`` call, and the plan when the call is valid.

    Returns:
        ``(content, plan)``: ``plan`` None means the call was rejected; ``content`` says why.
    """
    args = parse_args(call, UpdatePlanArgs)
    if isinstance(args, str):
        return f"invalid arguments for update_plan: {args}", None
    assert isinstance(args, UpdatePlanArgs)
    entries = [PlanEntry(content=e.content.strip(), status=e.status) for e in args.entries]
    done = sum(e.status == "completed" for e in entries)
    return f"plan updated ({done} of {len(entries)} done)", PlanUpdated(entries=entries)
