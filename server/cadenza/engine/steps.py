"""``resolve_step``: the structural loop rule as one small function tests can call alone.

A turn continues if and only if the reply carries tool calls (DESIGN §2 item 1). Assistant
prose never drives control flow: there is no test on the text here, or anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from cadenza.messages import AssistantReply, ToolCall


@dataclass(frozen=True, kw_only=True)
class RunTools:
    """Run these calls, then ask the model again."""

    tool_calls: list[ToolCall]
    cut: bool
    """True when the reply was cut by the token limit: its arguments may be incomplete."""


@dataclass(frozen=True, kw_only=True)
class FinishTurn:
    """The model ended its turn; ``content`` is its final answer."""

    content: str


NextStep = RunTools | FinishTurn


def resolve_step(reply: AssistantReply) -> NextStep:
    """Decide what follows a model reply, from its structure alone."""
    if reply.tool_calls:
        return RunTools(tool_calls=list(reply.tool_calls), cut=reply.finish_reason == "length")
    return FinishTurn(content=reply.content)
