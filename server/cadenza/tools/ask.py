"""``ask_user``: the first form of ``needs_user_input``: a question to the person."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field
from typing_extensions import override

from cadenza.tools.base import Tool, ToolArgs, ToolContext, ToolKind, ToolResult


class AskUserArgs(ToolArgs):
    """Arguments of the tool."""

    question: str = Field(min_length=1, description="The question for the person.")


class AskUser(Tool[AskUserArgs]):
    """Ask the person a question when no reasonable default exists."""

    name = "ask_user"
    description = (
        "Ask the person a question. Use only when the task cannot be done without an answer "
        "and no reasonable default exists."
    )
    args_model = AskUserArgs
    kind: ClassVar[ToolKind] = "other"
    timeout_s = 3600.0

    @override
    def title(self, args: AskUserArgs) -> str:
        return "asking the person"

    @override
    async def invoke(self, args: AskUserArgs, ctx: ToolContext) -> ToolResult:
        answer = await ctx.host.ask_user(args.question)
        if answer is None:
            return ToolResult(content="The person declined to answer. Use your best judgement.")
        return ToolResult(content=f"The person answered: {answer}")
