"""OpenAI-compatible Chat Completions over httpx (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter, ...).

Two modes behind one class: native ``tools`` (the default), and ``envelope`` where the reply is
constrained to a JSON envelope by ``response_format: {type: json_schema}`` (see ``envelope``).
A request may ask for the text edit format instead (``ModelRequest.reply_format``): plain
text, the tools described in the system message (``text_format``), no schema. All stream by
default; text deltas go to ``on_text`` as they arrive (not in envelope mode: an envelope's JSON
is never shown as it is written). A request's ``watch`` sees every delta, an envelope's JSON
included, and may stop the reply (``finish_reason`` ``repetition``).

The wire mapping has two halves: ``openai_request`` (conversation and tools → the request,
encoded once per message) and ``openai_reply`` (whole or streamed reply → ``AssistantReply``,
the finish-reason table); this module puts them together with the transport of ``http``.

Wire format (OpenAI API reference): "Chat Completions > Create chat completion"
https://platform.openai.com/docs/api-reference/chat/create.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import AsyncIterator
from typing import Any

from httpx_sse import ServerSentEvent

from cadenza.messages import AssistantReply
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from cadenza.providers.envelope import EnvelopeError, envelope_reply, envelope_schema
from cadenza.providers.envelope import map_messages as map_envelope_messages
from cadenza.providers.http import HttpTransport
from cadenza.providers.openai_reply import process_response, process_streamed_response
from cadenza.providers.openai_request import Fragments, dumps, map_messages, map_tools
from cadenza.providers.retry import RetryPolicy
from cadenza.providers.text_format import map_messages as map_text_messages
from cadenza.secrets import register_secret

DEFAULT_TIMEOUT_S = 600.0
"""Read timeout: the longest silence between two chunks (seconds); local models are slow."""
ENVELOPE_MAX_CALLS = 8
"""Calls allowed in one envelope when parallel calls are allowed."""


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
        self._fragments = Fragments()

    @property
    def name(self) -> str:
        """``PROVIDER/MODEL``."""
        return self._name

    def _parallel(self, request: ModelRequest) -> bool:
        """Whether this request allows several calls per reply (the request's say, else ours)."""
        if request.parallel_tool_calls is None:
            return self.parallel_tool_calls
        return request.parallel_tool_calls

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The request body for ``request`` in this provider's mode."""
        body: dict[str, Any] = {"model": self.model, **self._extra_body}
        parallel = self._parallel(request)
        if request.reply_format == "text":
            body["messages"] = map_text_messages(
                request.messages, request.tools, request.ending, request.example_file
            )
        elif self.envelope:
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
            body["messages"] = map_messages(request.messages)
            if request.tools:
                body["tools"] = map_tools(request.tools)
                body["tool_choice"] = request.tool_choice
                if not parallel:
                    body["parallel_tool_calls"] = False
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.frequency_penalty is not None:
            body["frequency_penalty"] = request.frequency_penalty
        if request.seed is not None:
            body["seed"] = request.seed
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def encode_body(self, request: ModelRequest) -> bytes:
        """``build_body`` as JSON bytes; native mode joins cached per-message fragments."""
        if self.envelope or request.reply_format == "text":
            return dumps(self.build_body(request))
        rest = self.build_body(dataclasses.replace(request, messages=[], tools=[]))
        rest.pop("messages", None)
        parts = [b'{"messages":[', self._fragments.history(request.messages)]
        if request.tools:
            parts += [b'],"tools":[', b",".join(self._fragments.get(t) for t in request.tools)]
            rest["tool_choice"] = request.tool_choice
            if not self._parallel(request):
                rest["parallel_tool_calls"] = False
        parts.append(b"]")
        tail = dumps(rest)
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
        envelope = self.envelope and request.reply_format != "text"
        sink = None if envelope else on_text

        async def consume(events: AsyncIterator[ServerSentEvent]) -> AssistantReply:
            return await process_streamed_response(
                events, on_text=sink, who=self._name, id_prefix=prefix, watch=request.watch
            )

        reply = await self._http.post(
            "chat/completions",
            body,
            whole=lambda data: process_response(data, who=self._name, id_prefix=prefix),
            events=consume if self.stream else None,
        )
        if not envelope:
            return reply  # text: the engine reads the calls out of it
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
