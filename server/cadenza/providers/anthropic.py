"""Anthropic Messages API over httpx, streamed (``anthropic/MODEL``).

The wire mapping has two halves: ``anthropic_request`` (conversation and tools → ``system``,
``messages`` and ``tools`` blocks) and ``anthropic_reply`` (whole or streamed reply →
``AssistantReply``, the stop-reason table); this module builds the request body (prompt-caching
marks, ``tool_choice``) and sends it through the transport of ``http``.

Wire format: "Messages > Create a Message", https://docs.anthropic.com/en/api/messages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from httpx_sse import ServerSentEvent

from cadenza.messages import AssistantReply
from cadenza.providers.anthropic_reply import process_response, process_streamed_response
from cadenza.providers.anthropic_request import EPHEMERAL, map_messages, map_tools
from cadenza.providers.base import ModelRequest, TextSink
from cadenza.providers.http import HttpTransport
from cadenza.providers.retry import RetryPolicy
from cadenza.secrets import register_secret

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header ("Versions", https://docs.anthropic.com/en/api/versioning)."""
DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` is required by the API; used when neither the request nor the config sets it."""
DEFAULT_TIMEOUT_S = 600.0


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
        system, messages = map_messages(request.messages)
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
            body["tools"] = map_tools(request.tools, cache=self.prompt_caching)
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
            return await process_streamed_response(events, on_text=on_text, who=self._name)

        return await self._http.post(
            "messages",
            body,
            whole=lambda data: process_response(data, who=self._name),
            events=consume if self.stream else None,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()
