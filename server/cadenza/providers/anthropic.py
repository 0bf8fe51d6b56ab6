"""Anthropic Messages API over httpx, streamed (``anthropic/MODEL``).

Mapping (Anthropic API docs, "Messages > Create a Message",
https://docs.anthropic.com/en/api/messages, and "Tool use > Handling tool use and tool
results", https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use):

- system messages → the top-level ``system`` (one text block), never a message;
- an assistant reply → ``text`` then ``tool_use`` blocks (``input`` an object);
- tool results → ``tool_result`` blocks (``is_error`` when the call failed) in ONE user message
  per batch, first in that message, as the API requires; a user message that follows a batch
  is merged into it after the results (consecutive turns of one role are merged);
- ``stop_reason`` through ``STOP_REASONS``: ``tool_use``, ``end_turn``, ``stop_sequence``,
  ``max_tokens`` → ``length`` (a tool call cut there keeps its raw partial JSON, so the engine
  answers it with an error and runs nothing: field case F11).

Streaming ("Streaming Messages", https://docs.anthropic.com/en/docs/build-with-claude/streaming):
``message_start`` (usage), ``content_block_start``, ``content_block_delta`` (``text_delta`` to
``on_text``; ``input_json_delta`` assembled per block index), ``content_block_stop``,
``message_delta`` (``stop_reason``, output usage), ``message_stop``; ``ping`` is ignored and an
``error`` event is a ``ProviderError``. The assembled blocks go through the same
``_process_content`` as a whole reply's ``content``.

Prompt caching ("Prompt caching", https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
``cache_control: {type: ephemeral}`` on the system block, the last tool and the last block of the
last message, so each step reuses the previous step's prefix.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, assert_never

from httpx_sse import ServerSentEvent

from cadenza.messages import (
    AssistantMessage,
    AssistantReply,
    FinishReason,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from cadenza.providers.http import HttpTransport, StreamEnded, json_event
from cadenza.providers.retry import RetryPolicy
from cadenza.secrets import redact, register_secret

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header ("Versions", https://docs.anthropic.com/en/api/versioning)."""
DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` is required by the API; used when neither the request nor the config sets it."""
DEFAULT_TIMEOUT_S = 600.0
EPHEMERAL = {"type": "ephemeral"}

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


def _map_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
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


def _map_tools(tools: list[ToolSpec], *, cache: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]
    if cache and out:
        out[-1]["cache_control"] = EPHEMERAL
    return out


def _usage(start: dict[str, Any], output_tokens: int | None) -> Usage | None:
    if not start and output_tokens is None:
        return None
    prompt = sum(
        int(start.get(key) or 0)
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    completion = (
        output_tokens if output_tokens is not None else int(start.get("output_tokens") or 0)
    )
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


def _call_arguments(raw: Any) -> str:
    """``tool_use.input``: an object in a whole reply, the assembled JSON text in a stream."""
    if isinstance(raw, str):
        return raw or "{}"
    return json.dumps(raw if raw is not None else {}, ensure_ascii=False)


def _process_content(
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
    finish = STOP_REASONS.get(str(stop_reason), "stop")
    if calls and finish == "stop":
        finish = "tool_calls"
    return AssistantReply(
        content="".join(text), tool_calls=calls, finish_reason=finish, usage=usage
    )


def _process_response(data: dict[str, Any], *, who: str) -> AssistantReply:
    """A whole Messages API response body → the normalized reply.

    Raises:
        ProviderError: An ``error`` body, or no ``content`` list.
    """
    if data.get("type") == "error" or isinstance(data.get("error"), dict):
        raise ProviderError(redact(f"{who}: the API reported an error: {data.get('error')}"))
    content = data.get("content")
    if not isinstance(content, list):
        raise ProviderError(redact(f"{who}: malformed response: no content ({str(data)[:200]})"))
    usage = data.get("usage")
    return _process_content(
        [b for b in content if isinstance(b, dict)],
        data.get("stop_reason"),
        _usage(usage if isinstance(usage, dict) else {}, None),
    )


@dataclass
class _StreamState:
    """Blocks by index (tool inputs as JSON text so far), stop reason, usage."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    stop_reason: str | None = None
    start_usage: dict[str, Any] = field(default_factory=dict)
    output_tokens: int | None = None
    stopped: bool = False

    def add(self, event: dict[str, Any], on_text: TextSink | None, who: str) -> None:
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
            self._delta(event, on_text)
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
            raise ProviderError(redact(f"{who}: the API reported an error: {event.get('error')}"))

    def _delta(self, event: dict[str, Any], on_text: TextSink | None) -> None:
        delta = event.get("delta") or {}
        block = self.blocks.setdefault(int(event.get("index", 0)), {})
        if delta.get("type") == "text_delta":
            text = str(delta.get("text") or "")
            block.setdefault("type", "text")
            block["text"] = str(block.get("text") or "") + text
            if on_text is not None and text:
                on_text(text)
        elif delta.get("type") == "input_json_delta":
            block["input"] = str(block.get("input") or "") + str(delta.get("partial_json") or "")

    def reply(self) -> AssistantReply:
        blocks = [block for _, block in sorted(self.blocks.items())]
        return _process_content(
            blocks, self.stop_reason, _usage(self.start_usage, self.output_tokens)
        )


async def _process_streamed_response(
    events: AsyncIterator[ServerSentEvent], *, on_text: TextSink | None, who: str
) -> AssistantReply:
    """Messages API stream events → the normalized reply (text deltas to ``on_text``).

    Raises:
        ProviderError: A malformed event, or an ``error`` event.
        StreamEnded: The stream stopped before ``message_stop`` (or a ``stop_reason``).
    """
    state = _StreamState()
    async for event in events:
        if not event.data.strip():
            continue
        state.add(json_event(event, who), on_text, who)
        if state.stopped:
            break
    if not (state.stopped or state.stop_reason):
        raise StreamEnded
    return state.reply()


class AnthropicProvider:
    """The Messages API (``POST /v1/messages``).

    Args:
        name: ``PROVIDER/MODEL`` as the person named it.
        model: The model id sent in requests (e.g. ``claude-sonnet-4-5``).
        api_key: Sent as ``x-api-key``; from the environment only, never logged.
        base_url: e.g. ``https://api.anthropic.com`` (``/v1/messages`` is appended).
        stream: Stream replies with server-sent events.
        max_tokens: Completion tokens when the request does not say.
        prompt_caching: Mark the system block, last tool and last message as cacheable.
        timeout_s: Read timeout per request (seconds).
        retry: Retry policy for 429/5xx/529/connection errors.
        headers: Extra HTTP headers (e.g. an ``anthropic-beta`` flag).
        extra_body: Extra request fields, sent as they are.
    """

    def __init__(
        self,
        *,
        name: str,
        model: str,
        api_key: str | None,
        base_url: str = DEFAULT_BASE_URL,
        stream: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        prompt_caching: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        headers: dict[str, str] | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self._name = name
        self.model = model
        self.stream = stream
        self.max_tokens = max_tokens
        self.prompt_caching = prompt_caching
        self._extra_body = extra_body or {}
        all_headers = {"anthropic-version": API_VERSION, **(headers or {})}
        if api_key:
            register_secret(api_key)
            all_headers["x-api-key"] = api_key
        base = base_url.rstrip("/")
        self._http = HttpTransport(
            who=name,
            base_url=base if base.endswith("/v1") else f"{base}/v1",
            headers=all_headers,
            timeout_s=timeout_s,
            retry=retry or RetryPolicy(),
        )

    @property
    def name(self) -> str:
        """``PROVIDER/MODEL``."""
        return self._name

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API request body for ``request``."""
        system, messages = _map_messages(request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": messages,
            **self._extra_body,
        }
        if system:
            block: dict[str, Any] = {"type": "text", "text": system}
            if self.prompt_caching:
                block["cache_control"] = EPHEMERAL
            body["system"] = [block]
        if self.prompt_caching and messages and messages[-1]["content"]:
            last = dict(messages[-1]["content"][-1])
            last["cache_control"] = EPHEMERAL
            messages[-1]["content"][-1] = last
        if request.tools:
            body["tools"] = _map_tools(request.tools, cache=self.prompt_caching)
            choice: dict[str, Any] = {
                "type": "any" if request.tool_choice == "required" else "auto"
            }
            if request.parallel_tool_calls is False:
                choice["disable_parallel_tool_use"] = True
            body["tool_choice"] = choice
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if self.stream:
            body["stream"] = True
        return body

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """Run one Messages API call (see ``Provider.complete``).

        Raises:
            ProviderError: After retries; or a client error (e.g. 401), a malformed reply, an
                ``error`` event, or a stream cut after its first event.
        """
        body = self.build_body(request)

        async def consume(events: AsyncIterator[ServerSentEvent]) -> AssistantReply:
            return await _process_streamed_response(events, on_text=on_text, who=self._name)

        return await self._http.post(
            "messages",
            body,
            whole=lambda data: _process_response(data, who=self._name),
            events=consume if self.stream else None,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()
