"""OpenAI-compatible Chat Completions over httpx (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter, ...).

Two modes behind one class: native ``tools`` (the default), and ``envelope`` where the reply is
constrained to a JSON envelope by ``response_format: {type: json_schema}`` (see ``envelope``).
Both stream by default: ``stream: true`` with ``stream_options: {include_usage: true}``, the
chunks decoded by ``httpx-sse``; text deltas go to ``on_text`` as they arrive (native mode only:
an envelope's JSON is never shown as it is written), tool-call deltas are assembled by their
``index``. A streamed reply is assembled into the shape of a whole one and goes through the
same ``_process_message`` as a whole reply.

Wire format (OpenAI API reference): "Chat Completions > Create chat completion"
https://platform.openai.com/docs/api-reference/chat/create and "The chat completion chunk
object" https://platform.openai.com/docs/api-reference/chat-streaming/streaming.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import operator
import weakref
from collections import OrderedDict
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
from cadenza.providers.envelope import EnvelopeError, envelope_reply, envelope_schema
from cadenza.providers.envelope import map_messages as map_envelope_messages
from cadenza.providers.http import HttpTransport, StreamEnded, json_event
from cadenza.providers.retry import RetryPolicy
from cadenza.secrets import redact, register_secret

DEFAULT_TIMEOUT_S = 600.0
"""Read timeout: the longest silence between two chunks (seconds); local models are slow."""
ENVELOPE_MAX_CALLS = 8
"""Calls allowed in one envelope when parallel calls are allowed."""

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
"""Chat Completions ``finish_reason`` → Cadenza's; anything else counts as ``stop``."""


def _map_message(message: Message) -> dict[str, Any]:
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


def _map_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Conversation → Chat Completions ``messages`` (native tool calling)."""
    return [_map_message(m) for m in messages]


def _map_tool(t: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
    }


def _map_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs → Chat Completions ``tools``."""
    return [_map_tool(t) for t in tools]


def _dumps(value: Any) -> bytes:
    """JSON as httpx's ``json=`` writes it (compact, UTF-8, no NaN)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


HISTORIES = 64
"""Conversations whose joined history ``_Fragments`` keeps (least recently used dropped)."""


class _Fragments:
    """The encoded JSON of each message and tool spec, made once per object.

    Messages and specs are frozen and a session only appends to its history, so re-encoding
    the whole history for every request made each step cost time linear in the history with a
    large constant (docs/performance.md); now a request joins the stored fragments. Entries
    are keyed by identity and dropped when their object is garbage collected.
    """

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref[Any], bytes]] = {}
        self._histories: OrderedDict[int, tuple[list[Message], bytes]] = OrderedDict()

    def get(self, item: Message | ToolSpec) -> bytes:
        key = id(item)
        found = self._items.get(key)
        if found is not None and found[0]() is item:
            return found[1]
        data = _dumps(_map_tool(item) if isinstance(item, ToolSpec) else _map_message(item))
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


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
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


def _process_message(
    message: dict[str, Any], finish_reason: Any, usage: Any, *, id_prefix: str
) -> AssistantReply:
    """A whole or assembled assistant ``message`` → the normalized reply.

    Args:
        message: ``{"content": str | None, "tool_calls": [{"id", "function": {...}}]}``.
        finish_reason: The choice's raw ``finish_reason``.
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
    finish = FINISH_REASONS.get(str(finish_reason), "stop")
    if calls and finish == "stop":
        finish = "tool_calls"  # Ollama and others say "stop" next to tool calls
    content = message.get("content")
    return AssistantReply(
        content=content if isinstance(content, str) else "",
        tool_calls=unique_ids(calls),
        finish_reason=finish,
        usage=_usage(usage),
    )


def _process_response(data: dict[str, Any], *, who: str, id_prefix: str) -> AssistantReply:
    """A whole Chat Completions response body → the normalized reply.

    Raises:
        ProviderError: The body has no choices (or carries an ``error``).
    """
    if isinstance(data.get("error"), dict):
        raise ProviderError(redact(f"{who}: the server reported an error: {data['error']}"))
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError(redact(f"{who}: malformed response: no choices ({str(data)[:200]})"))
    choice = choices[0]
    message = choice.get("message")
    return _process_message(
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

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    done: bool = False

    def add(self, chunk: dict[str, Any], on_text: TextSink | None) -> None:
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.text.append(text)
                if on_text is not None:
                    on_text(text)
            for position, item in enumerate(delta.get("tool_calls") or []):
                self._add_call(position, item)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])

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
            slot.arguments.append(_arguments(function["arguments"]))

    @property
    def complete(self) -> bool:
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


async def _process_streamed_response(
    events: AsyncIterator[ServerSentEvent], *, on_text: TextSink | None, who: str, id_prefix: str
) -> AssistantReply:
    """Chat Completions chunks → the normalized reply (text deltas to ``on_text`` on the way).

    Raises:
        ProviderError: A malformed chunk, or an ``error`` object in the stream.
        StreamEnded: The stream stopped before a ``finish_reason`` or ``[DONE]``.
    """
    state = _StreamState()
    async for event in events:
        if event.data.strip() == "[DONE]":
            state.done = True
            break
        if not event.data.strip():
            continue
        chunk = json_event(event, who)
        if isinstance(chunk.get("error"), dict):
            raise ProviderError(redact(f"{who}: the server reported an error: {chunk['error']}"))
        state.add(chunk, on_text)
    if not state.complete:
        raise StreamEnded
    return _process_message(state.message(), state.finish_reason, state.usage, id_prefix=id_prefix)


class OpenAIProvider:
    """A Chat Completions endpoint.

    Args:
        name: ``PROVIDER/MODEL`` as the person named it.
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8080/v1``.
        model: The model id sent in requests.
        api_key: Bearer token, from the environment only; never logged or shown in errors.
        envelope: Use the JSON-envelope mode with ``response_format`` json_schema.
        stream: Stream replies with server-sent events.
        timeout_s: Read timeout per request (seconds).
        retry: Retry policy for 429/5xx/connection errors.
        extra_body: Extra request fields (e.g. ``{"cache_prompt": true}`` for llama.cpp).
        headers: Extra HTTP headers (e.g. OpenRouter's ``HTTP-Referer``).
        parallel_tool_calls: Default for requests that leave it unset (False: one call per
            reply, better for small models).
    """

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        model: str,
        api_key: str | None = None,
        envelope: bool = False,
        stream: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        parallel_tool_calls: bool = True,
    ) -> None:
        self._name = name
        self.model = model
        self.envelope = envelope
        self.stream = stream
        self.parallel_tool_calls = parallel_tool_calls
        self._extra_body = extra_body or {}
        all_headers = dict(headers or {})
        if api_key:
            register_secret(api_key)
            all_headers["Authorization"] = f"Bearer {api_key}"
        self._http = HttpTransport(
            who=name,
            base_url=base_url,
            headers=all_headers,
            timeout_s=timeout_s,
            retry=retry or RetryPolicy(),
        )
        self._ids = itertools.count(1)
        self._fragments = _Fragments()

    @property
    def name(self) -> str:
        """``PROVIDER/MODEL``."""
        return self._name

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The request body for ``request`` in this provider's mode."""
        body: dict[str, Any] = {"model": self.model, **self._extra_body}
        parallel = request.parallel_tool_calls
        if parallel is None:
            parallel = self.parallel_tool_calls
        if self.envelope:
            body["messages"] = map_envelope_messages(
                request.messages, request.tools, request.ending
            )
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "reply",
                    "strict": True,
                    "schema": envelope_schema(
                        request.tools,
                        require_call=request.tool_choice == "required",
                        max_calls=ENVELOPE_MAX_CALLS if parallel else 1,
                    ),
                },
            }
        else:
            body["messages"] = _map_messages(request.messages)
            if request.tools:
                body["tools"] = _map_tools(request.tools)
                body["tool_choice"] = request.tool_choice
                if not parallel:
                    body["parallel_tool_calls"] = False
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def encode_body(self, request: ModelRequest) -> bytes:
        """``build_body`` as JSON bytes; native mode joins cached per-message fragments."""
        if self.envelope:
            return _dumps(self.build_body(request))
        rest = self.build_body(dataclasses.replace(request, messages=[], tools=[]))
        rest.pop("messages", None)
        parts = [b'{"messages":[', self._fragments.history(request.messages)]
        if request.tools:
            parts += [b'],"tools":[', b",".join(self._fragments.get(t) for t in request.tools)]
            rest["tool_choice"] = request.tool_choice
            parallel = request.parallel_tool_calls
            if parallel is None:
                parallel = self.parallel_tool_calls
            if not parallel:
                rest["parallel_tool_calls"] = False
        parts.append(b"]")
        tail = _dumps(rest)
        if tail != b"{}":
            parts += [b",", tail[1:-1]]
        parts.append(b"}")
        return b"".join(parts)

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """Run one Chat Completions call (see ``Provider.complete``).

        Raises:
            ProviderError: After retries; or a client error, a malformed reply, a stream cut
                after its first event, or (envelope mode) a whole reply that is no envelope.
        """
        body = self.encode_body(request)
        prefix = f"call_{next(self._ids)}"
        # An envelope is JSON: the person sees its content once it is parsed, not as it is typed.
        sink = None if self.envelope else on_text

        async def consume(events: AsyncIterator[ServerSentEvent]) -> AssistantReply:
            return await _process_streamed_response(
                events, on_text=sink, who=self._name, id_prefix=prefix
            )

        reply = await self._http.post(
            "chat/completions",
            body,
            whole=lambda data: _process_response(data, who=self._name, id_prefix=prefix),
            events=consume if self.stream else None,
        )
        if not self.envelope:
            return reply
        try:
            return envelope_reply(
                reply.content,
                finish_reason=reply.finish_reason,
                usage=reply.usage,
                id_prefix=prefix,
            )
        except EnvelopeError as exc:
            raise ProviderError(f"{self._name} returned no JSON envelope ({exc})") from None

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()
