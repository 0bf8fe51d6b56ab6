"""The model conversation: one pydantic union shared by the engine and every provider.

This module is the only bridge between the engine and the providers (no pygls, no httpx here).
Names follow OpenAI Chat Completions (``tool_calls``, ``tool_call_id``, ``finish_reason``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class ToolCall(BaseModel):
    """One tool call requested by the model.

    ``arguments`` stays the raw JSON text the model produced; it is parsed and validated only
    when the tool runs, so a malformed call becomes an error result the model can read.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str
    error: str | None = Field(default=None, exclude=True)
    """Set when the model's text could not be read as this call (the text edit format,
    ``providers.text_reply``): the call is answered with this error and never run. Not
    serialized: it matters only until the call's result is recorded."""


class SystemMessage(BaseModel):
    """The system prompt."""

    role: Literal["system"] = "system"
    content: str


UserTag = Literal[
    "task",
    "workspace",
    "files",
    "answer",
    "steer",
    "movement",
    "checkpoint",
    "summary",
    "repair",
    "check",
]


class UserMessage(BaseModel):
    """A message in the user role: the task, an answer, a steer, or one the engine adds.

    ``tag`` says which (never sent to a model): compaction keeps the task and the latest
    checkpoints, and summarizes the rest.
    """

    role: Literal["user"] = "user"
    content: str
    tag: UserTag | None = None


PERSON_TAGS: frozenset[UserTag] = frozenset({"task", "answer"})
"""Tags of the user messages the person wrote; the rest are Cadenza's own (movements, checks)."""


def from_person(message: object) -> bool:
    """Whether ``message`` is one the person wrote: the task, an answer, a follow-up."""
    return isinstance(message, UserMessage) and message.tag in PERSON_TAGS


class AssistantMessage(BaseModel):
    """A model reply as it is kept in history."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolMessage(BaseModel):
    """The result of one tool call; exactly one answers each ``ToolCall.id``.

    ``unchanged`` (a whole-file write that found the file already holding its text) is kept
    for the engine and the transcript; providers send only the content and the error flag.
    """

    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    unchanged: bool = False


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
MESSAGES_ADAPTER: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


class ToolSpec(BaseModel):
    """A tool as offered to the model: ``parameters`` is a JSON Schema object."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]


class Usage(BaseModel):
    """Token counts of one model call, as reported by the provider (tokens, not characters)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    """What the call cost, as the provider reported it or a price table gives it; None: unknown."""
    currency: str = "USD"

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error", "repetition"]
"""Why a reply ended. ``length``: the token limit cut it; ``repetition``: Cadenza stopped it
while it streamed because it kept repeating itself (``ModelRequest.watch``). Both are cut
replies: what they carry may be incomplete."""

CUT_REASONS: frozenset[FinishReason] = frozenset({"length", "repetition"})
"""Finish reasons of a reply that ended before the model finished it."""


class AssistantReply(BaseModel):
    """One normalized model reply, the same for every provider.

    ``tool_calls`` empty means the model ended its turn (the cross-provider equivalent of an
    Anthropic ``stop_reason`` other than ``tool_use``).
    """

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: FinishReason = "stop"
    usage: Usage | None = None

    @property
    def cut(self) -> bool:
        """Whether the reply ended before the model finished it (``CUT_REASONS``)."""
        return self.finish_reason in CUT_REASONS

    def to_message(self) -> AssistantMessage:
        """The reply as it is appended to the conversation."""
        return AssistantMessage(content=self.content, tool_calls=list(self.tool_calls))


_FENCE_RUN = re.compile(r"(?:^|(?<=\r))[ \t]*(`{3,})", re.MULTILINE)


def longest_fence(text: str) -> int:
    r"""The longest run of three or more backticks that starts a line of ``text`` (0: none).

    A line starts after ``\n`` or ``\r``, as the text format's reader splits a reply.
    """
    return max((len(run) for run in _FENCE_RUN.findall(text)), default=0)


def fence_for(text: str) -> str:
    """A backtick fence longer than any that starts a line of ``text`` (at least three).

    Text quoted between such fences cannot close them (CommonMark), so a file holding fenced
    blocks of its own reads as one block, and a model that writes it back between the same
    fences sends it whole.
    """
    return "`" * max(3, longest_fence(text) + 1)
