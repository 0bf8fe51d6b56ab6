"""Chat Completions requests: the conversation and tools as the wire wants them, encoded once.

``map_messages`` and ``map_tools`` give the request's ``messages`` (native ``tool_calls``) and
``tools``; ``Fragments`` keeps the encoded JSON of each message and tool spec so a request body
is joined from stored pieces instead of re-encoding the whole history every step.

Wire format (OpenAI API reference): "Chat Completions > Create chat completion"
https://platform.openai.com/docs/api-reference/chat/create.
"""

from __future__ import annotations

import functools
import json
import operator
import weakref
from collections import OrderedDict
from typing import Any, assert_never

from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

HISTORIES = 64
"""Conversations whose joined history ``Fragments`` keeps (least recently used dropped)."""


def map_message(message: Message) -> dict[str, Any]:
    """One conversation message → one Chat Completions message with native ``tool_calls``."""
    match message:
        case SystemMessage() | UserMessage():
            return {"role": message.role, "content": message.content}
        case AssistantMessage():
            item: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in message.tool_calls
                ]
            return item
        case ToolMessage():
            return {
                "role": "tool",
                "tool_call_id": message.tool_call_id,
                "content": message.content,
            }
        case _:
            assert_never(message)


def map_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Conversation → Chat Completions ``messages`` (native tool calling)."""
    return [map_message(m) for m in messages]


def map_tool(t: ToolSpec) -> dict[str, Any]:
    """One tool spec → one Chat Completions ``function`` tool."""
    return {
        "type": "function",
        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
    }


def map_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs → Chat Completions ``tools``."""
    return [map_tool(t) for t in tools]


def dumps(value: Any) -> bytes:
    """JSON as httpx's ``json=`` writes it (compact, UTF-8, no NaN)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class Fragments:
    """The encoded JSON of each message and tool spec, made once per object.

    Messages and specs are frozen and a session only appends to its history, so re-encoding
    the whole history for every request made each step cost time linear in the history with a
    large constant (docs/lab/performance.md); now a request joins the stored fragments. Entries
    are keyed by identity and dropped when their object is garbage collected.
    """

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref[Any], bytes]] = {}
        self._histories: OrderedDict[int, tuple[list[Message], bytes]] = OrderedDict()

    def get(self, item: Message | ToolSpec) -> bytes:
        """The encoded JSON of one message or tool spec (made on first use)."""
        key = id(item)
        found = self._items.get(key)
        if found is not None and found[0]() is item:
            return found[1]
        data = dumps(map_tool(item) if isinstance(item, ToolSpec) else map_message(item))
        self._items[key] = (weakref.ref(item, functools.partial(self._forget, key)), data)
        return data

    def _forget(self, key: int, _ref: object) -> None:
        self._items.pop(key, None)

    def history(self, messages: list[Message]) -> bytes:
        """The messages' fragments joined by commas.

        A conversation only grows between requests, so the join of the previous request of
        the same conversation (known by its first message) is reused when the new history
        starts with the same message objects (checked by identity, at C speed): each request
        encodes only what was appended. The last ``HISTORIES`` conversations are kept.
        """
        if not messages:
            return b""
        key = id(messages[0])
        known = self._histories.pop(key, None)
        if (
            known is not None
            and len(known[0]) <= len(messages)
            and all(map(operator.is_, known[0], messages))
        ):
            added = b",".join(self.get(m) for m in messages[len(known[0]) :])
            joined = known[1] + b"," + added if added else known[1]
        else:
            joined = b",".join(self.get(m) for m in messages)
        self._histories[key] = (list(messages), joined)
        while len(self._histories) > HISTORIES:
            self._histories.popitem(last=False)
        return joined
