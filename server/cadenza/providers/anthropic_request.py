"""Messages API requests: the conversation and tools as the Anthropic wire wants them.

Mapping (Anthropic API docs, "Messages > Create a Message",
https://docs.anthropic.com/en/api/messages, and "Tool use > Handling tool use and tool
results", https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use):

- system messages → the top-level ``system`` (one text block), never a message;
- an assistant reply → ``text`` then ``tool_use`` blocks (``input`` an object);
- tool results → ``tool_result`` blocks (``is_error`` when the call failed) in ONE user message
  per batch, first in that message, as the API requires; a user message that follows a batch
  is merged into it after the results (consecutive turns of one role are merged).

Prompt caching ("Prompt caching", https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
``cache_control: {type: ephemeral}`` on the system block, the last tool and the last block of the
last message, so each step reuses the previous step's prefix.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

EPHEMERAL = {"type": "ephemeral"}
"""The ``cache_control`` that marks the end of a cacheable prefix."""


def _tool_input(arguments: str) -> dict[str, Any]:
    """A stored call's raw arguments as the object ``tool_use.input`` must be.

    A call whose arguments never parsed (cut by the token limit, or malformed) was answered
    with an error result; it is sent with an empty input rather than a repaired guess.
    """
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content.strip():  # the API refuses empty or blank text blocks
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
        for c in message.tool_calls
    )
    return blocks


def _tool_result(message: ToolMessage) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if message.content:
        block["content"] = message.content
    if message.is_error:
        block["is_error"] = True
    return block


def map_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Conversation → ``(system text, Messages API messages)``.

    Consecutive turns of one role become one message, so every batch of tool results is one
    user message whose ``tool_result`` blocks come first.
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        match message:
            case SystemMessage():
                system.append(message.content)
            case UserMessage():
                if message.content.strip():
                    push("user", [{"type": "text", "text": message.content}])
            case AssistantMessage():
                push("assistant", _assistant_blocks(message))
            case ToolMessage():
                push("user", [_tool_result(message)])
            case _:
                assert_never(message)
    return "\n\n".join(system), turns


def map_tools(tools: list[ToolSpec], *, cache: bool) -> list[dict[str, Any]]:
    """Tool specs → Messages API ``tools``; with ``cache`` the last one ends the cached prefix."""
    out: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]
    if cache and out:
        out[-1]["cache_control"] = EPHEMERAL
    return out
