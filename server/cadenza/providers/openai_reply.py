"""Chat Completions replies, whole or streamed, → the normalized ``AssistantReply``.

A streamed reply (``stream: true`` with ``stream_options: {include_usage: true}``, chunks
decoded by ``httpx-sse``) is assembled into the shape of a whole one: text deltas go to
``on_text`` as they arrive, tool-call deltas are assembled by their ``index``. Both shapes then
go through the same ``process_message``, so streamed and whole replies map alike. A request's
``watch`` sees every delta and may stop the reply: it ends there, as ``repetition``.

Wire format (OpenAI API reference): "The chat completion object"
https://platform.openai.com/docs/api-reference/chat/object and "The chat completion chunk
object" https://platform.openai.com/docs/api-reference/chat-streaming/streaming.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from httpx_sse import ServerSentEvent

from cadenza.messages import AssistantReply, FinishReason, ToolCall, Usage
from cadenza.providers.base import StreamWatch, TextSink
from cadenza.providers.http import read_stream
from cadenza.providers.replies import finish_reason, malformed_reply, reported_error

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
"""Chat Completions ``finish_reason`` → Cadenza's; anything else counts as ``stop``."""

DONE = "[DONE]"
"""The data of the stream's last event (not JSON)."""


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    cost = raw.get("cost")  # OpenRouter reports each call's cost (US dollars)
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


def _arguments(raw: Any) -> str:
    """Arguments as raw JSON text (a few servers send an object instead of a string)."""
    if isinstance(raw, str):
        return raw
    if raw is None:
        return ""
    return json.dumps(raw, ensure_ascii=False)


def unique_ids(calls: list[ToolCall]) -> list[ToolCall]:
    """Give calls that share an id (some servers repeat them) distinct ones.

    Each result must answer exactly one call, so two calls of one reply can never share an id.
    """
    seen: set[str] = set()
    out = []
    for i, c in enumerate(calls):
        if c.id in seen:
            c = c.model_copy(update={"id": f"{c.id}_{i}"})
        seen.add(c.id)
        out.append(c)
    return out


def process_message(
    message: dict[str, Any], raw_finish: Any, usage: Any, *, id_prefix: str
) -> AssistantReply:
    """A whole or assembled assistant ``message`` → the normalized reply.

    Args:
        message: ``{"content": str | None, "tool_calls": [{"id", "function": {...}}]}``.
        raw_finish: The choice's raw ``finish_reason``.
        usage: The raw ``usage`` object, if any.
        id_prefix: For calls that came without an id (``{id_prefix}_{i}``).
    """
    calls = [
        ToolCall(
            id=str(c.get("id") or f"{id_prefix}_{i}"),
            name=str(c["function"].get("name") or ""),
            arguments=_arguments(c["function"].get("arguments")),
        )
        for i, c in enumerate(message.get("tool_calls") or [])
        if isinstance(c, dict) and isinstance(c.get("function"), dict)
    ]
    content = message.get("content")
    return AssistantReply(
        content=content if isinstance(content, str) else "",
        tool_calls=unique_ids(calls),
        finish_reason=finish_reason(FINISH_REASONS, raw_finish, has_calls=bool(calls)),
        usage=_usage(usage),
    )


def process_response(data: dict[str, Any], *, who: str, id_prefix: str) -> AssistantReply:
    """A whole Chat Completions response body → the normalized reply.

    Raises:
        ProviderError: The body has no choices (or carries an ``error``).
    """
    if isinstance(data.get("error"), dict):
        raise reported_error(who, "server", data["error"])
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise malformed_reply(who, "choices", data)
    choice = choices[0]
    message = choice.get("message")
    return process_message(
        message if isinstance(message, dict) else {},
        choice.get("finish_reason"),
        data.get("usage"),
        id_prefix=id_prefix,
    )


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _StreamState:
    """What the chunks said so far: text, calls by ``index``, finish reason, usage."""

    who: str
    on_text: TextSink | None
    watch: StreamWatch | None = None
    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    done: bool = False
    stopped: bool = False
    """The watch stopped the reply: nothing after that delta is read."""

    def add(self, data: dict[str, Any]) -> None:
        """Take one chunk (see ``http.StreamState``)."""
        if isinstance(data.get("error"), dict):
            raise reported_error(self.who, "server", data["error"])
        if isinstance(data.get("usage"), dict):
            self.usage = data["usage"]
        for choice in data.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.text.append(text)
                if self.on_text is not None:
                    self.on_text(text)
                self._watch(text)
            for position, item in enumerate(delta.get("tool_calls") or []):
                self._add_call(position, item)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])

    def _watch(self, delta: str) -> None:
        if self.watch is not None and not self.stopped and self.watch(delta):
            self.stopped = self.done = True  # ``ended``: ``read_stream`` reads no further

    def _add_call(self, position: int, item: Any) -> None:
        if not isinstance(item, dict):
            return
        index = item.get("index")
        slot = self.calls.setdefault(index if isinstance(index, int) else position, _PartialCall())
        if item.get("id"):
            slot.id = str(item["id"])
        function = item.get("function") or {}
        if function.get("name") and not slot.name:
            slot.name = str(function["name"])
        if function.get("arguments") is not None:
            piece = _arguments(function["arguments"])
            slot.arguments.append(piece)
            self._watch(piece)

    def end(self) -> None:
        """``[DONE]`` arrived."""
        self.done = True

    @property
    def ended(self) -> bool:
        """Only ``[DONE]`` ends the stream: usage comes in a chunk after the finish reason."""
        return self.done

    @property
    def complete(self) -> bool:
        """``[DONE]`` or a finish reason was seen."""
        return self.done or self.finish_reason is not None

    def message(self) -> dict[str, Any]:
        """The assembled message, in the shape of a whole response's ``message``."""
        return {
            "content": "".join(self.text),
            "tool_calls": [
                {
                    "id": call.id or None,
                    "function": {"name": call.name, "arguments": "".join(call.arguments)},
                }
                for _, call in sorted(self.calls.items())
            ],
        }


async def process_streamed_response(
    events: AsyncIterator[ServerSentEvent],
    *,
    on_text: TextSink | None,
    who: str,
    id_prefix: str,
    watch: StreamWatch | None = None,
) -> AssistantReply:
    """Chat Completions chunks → the normalized reply (text deltas to ``on_text`` on the way).

    ``watch`` sees each delta; when it stops the reply, the reply is what came so far, with
    ``finish_reason`` ``repetition`` (the caller's leaving the stream closes the connection).

    Raises:
        ProviderError: A malformed chunk, or an ``error`` object in the stream.
        StreamEnded: The stream stopped before a ``finish_reason`` or ``[DONE]``.
    """
    state = _StreamState(who=who, on_text=on_text, watch=watch)
    await read_stream(events, state, who=who, end_marker=DONE)
    reply = process_message(state.message(), state.finish_reason, state.usage, id_prefix=id_prefix)
    if state.stopped:
        return reply.model_copy(update={"finish_reason": "repetition"})
    return reply
