"""Messages API replies, whole or streamed, → the normalized ``AssistantReply``.

``stop_reason`` goes through ``STOP_REASONS``: ``tool_use``, ``end_turn``, ``stop_sequence``,
``max_tokens`` → ``length`` (a tool call cut there keeps its raw partial JSON, so the engine
answers it with an error and runs nothing).

Streaming ("Streaming Messages", https://docs.anthropic.com/en/docs/build-with-claude/streaming):
``message_start`` (usage), ``content_block_start``, ``content_block_delta`` (``text_delta`` to
``on_text``; ``input_json_delta`` assembled per block index), ``content_block_stop``,
``message_delta`` (``stop_reason``, output usage), ``message_stop``; ``ping`` is ignored and an
``error`` event is a ``ProviderError``. The assembled blocks go through the same
``process_content`` as a whole reply's ``content``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from httpx_sse import ServerSentEvent

from cadenza.messages import AssistantReply, FinishReason, ToolCall, Usage
from cadenza.providers.base import TextSink
from cadenza.providers.http import read_stream
from cadenza.providers.replies import (
    cached_prompt_tokens,
    finish_reason,
    malformed_reply,
    reported_error,
)

STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "refusal": "content_filter",
    "model_context_window_exceeded": "length",
}
"""Messages API ``stop_reason`` → Cadenza's; anything else counts as ``stop``."""


def _usage(start: dict[str, Any], output_tokens: int | None) -> Usage | None:
    if not start and output_tokens is None:
        return None
    prompt = cached_prompt_tokens(start)
    completion = (
        output_tokens if output_tokens is not None else int(start.get("output_tokens") or 0)
    )
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


def _call_arguments(raw: Any) -> str:
    """``tool_use.input``: an object in a whole reply, the assembled JSON text in a stream."""
    if isinstance(raw, str):
        return raw or "{}"
    return json.dumps(raw if raw is not None else {}, ensure_ascii=False)


def process_content(
    blocks: list[dict[str, Any]], stop_reason: Any, usage: Usage | None
) -> AssistantReply:
    """Content blocks (whole or assembled) → the normalized reply.

    ``thinking`` and other block types carry nothing the conversation keeps.
    """
    text: list[str] = []
    calls: list[ToolCall] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            text.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append(
                ToolCall(
                    id=str(block.get("id") or f"toolu_{len(calls)}"),
                    name=str(block.get("name") or ""),
                    arguments=_call_arguments(block.get("input")),
                )
            )
    return AssistantReply(
        content="".join(text),
        tool_calls=calls,
        finish_reason=finish_reason(STOP_REASONS, stop_reason, has_calls=bool(calls)),
        usage=usage,
    )


def process_response(data: dict[str, Any], *, who: str) -> AssistantReply:
    """A whole Messages API response body → the normalized reply.

    Raises:
        ProviderError: An ``error`` body, or no ``content`` list.
    """
    if data.get("type") == "error" or isinstance(data.get("error"), dict):
        raise reported_error(who, "API", data.get("error"))
    content = data.get("content")
    if not isinstance(content, list):
        raise malformed_reply(who, "content", data)
    usage = data.get("usage")
    return process_content(
        [b for b in content if isinstance(b, dict)],
        data.get("stop_reason"),
        _usage(usage if isinstance(usage, dict) else {}, None),
    )


@dataclass
class _StreamState:
    """Blocks by index (tool inputs as JSON text so far), stop reason, usage."""

    who: str
    on_text: TextSink | None
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    stop_reason: str | None = None
    start_usage: dict[str, Any] = field(default_factory=dict)
    output_tokens: int | None = None
    stopped: bool = False

    def add(self, event: dict[str, Any]) -> None:
        """Take one event (see ``http.StreamState``); ``ping`` and unknown events are ignored."""
        kind = event.get("type")
        if kind == "message_start":
            usage = (event.get("message") or {}).get("usage")
            self.start_usage = usage if isinstance(usage, dict) else {}
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            if block.get("type") == "tool_use":
                block["input"] = ""  # filled by input_json_delta
            self.blocks[int(event.get("index", len(self.blocks)))] = block
        elif kind == "content_block_delta":
            self._delta(event)
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason"):
                self.stop_reason = str(delta["stop_reason"])
            usage = event.get("usage") or {}
            if usage.get("output_tokens") is not None:
                self.output_tokens = int(usage["output_tokens"])
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise reported_error(self.who, "API", event.get("error"))

    def _delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") or {}
        block = self.blocks.setdefault(int(event.get("index", 0)), {})
        if delta.get("type") == "text_delta":
            text = str(delta.get("text") or "")
            block.setdefault("type", "text")
            block["text"] = str(block.get("text") or "") + text
            if self.on_text is not None and text:
                self.on_text(text)
        elif delta.get("type") == "input_json_delta":
            block["input"] = str(block.get("input") or "") + str(delta.get("partial_json") or "")

    def end(self) -> None:
        """Never called: the Messages API's stream has no end marker besides ``message_stop``."""
        self.stopped = True

    @property
    def ended(self) -> bool:
        """``message_stop`` was seen."""
        return self.stopped

    @property
    def complete(self) -> bool:
        """``message_stop`` or a ``stop_reason`` was seen."""
        return self.stopped or self.stop_reason is not None

    def reply(self) -> AssistantReply:
        """The assembled blocks as one reply."""
        blocks = [block for _, block in sorted(self.blocks.items())]
        return process_content(
            blocks, self.stop_reason, _usage(self.start_usage, self.output_tokens)
        )


async def process_streamed_response(
    events: AsyncIterator[ServerSentEvent], *, on_text: TextSink | None, who: str
) -> AssistantReply:
    """Messages API stream events → the normalized reply (text deltas to ``on_text``).

    Raises:
        ProviderError: A malformed event, or an ``error`` event.
        StreamEnded: The stream stopped before ``message_stop`` (or a ``stop_reason``).
    """
    state = _StreamState(who=who, on_text=on_text)
    await read_stream(events, state, who=who)
    return state.reply()
