"""OpenAI-compatible Chat Completions over httpx (OpenAI, Ollama, vLLM, llama.cpp, LM Studio).

Two modes behind one class: native ``tools`` (the default), and ``envelope`` where the reply is
constrained to a JSON envelope by ``response_format: {type: json_schema}`` (see ``envelope``).
Wire format: https://platform.openai.com/docs/api-reference/chat/create.
"""

from __future__ import annotations

import itertools
from typing import Any

import httpx

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
from cadenza.providers.retry import RetryableStatus, RetryPolicy, with_retries

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


def map_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Conversation → Chat Completions ``messages`` with native ``tool_calls``."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage | UserMessage):
            out.append({"role": m.role, "content": m.content})
        elif isinstance(m, AssistantMessage):
            item: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in m.tool_calls
                ]
            out.append(item)
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
    return out


def map_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs → Chat Completions ``tools``."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def _usage(data: dict[str, Any]) -> Usage | None:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )


def process_response(
    data: dict[str, Any],
) -> tuple[str, list[ToolCall], FinishReason, Usage | None]:
    """Chat Completions response body → (content, tool_calls, finish_reason, usage).

    Raises:
        ProviderError: The body has no choices.
    """
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ProviderError(f"malformed response: no choices ({str(data)[:200]})")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = [
        ToolCall(
            id=str(c.get("id") or f"call_{i}"),
            name=str(c["function"].get("name", "")),
            arguments=str(c["function"].get("arguments") or ""),
        )
        for i, c in enumerate(message.get("tool_calls") or [])
        if isinstance(c, dict) and isinstance(c.get("function"), dict)
    ]
    finish = FINISH_REASONS.get(str(choice.get("finish_reason")), "stop")
    return str(message.get("content") or ""), unique_ids(calls), finish, _usage(data)


def unique_ids(calls: list[ToolCall]) -> list[ToolCall]:
    """Give calls that share an id (some servers repeat or omit them) distinct ones.

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


class OpenAIProvider:
    """A Chat Completions endpoint.

    Args:
        name: ``PROVIDER/MODEL`` as the person named it.
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8080/v1``.
        model: The model id sent in requests.
        api_key: Bearer token, from the environment only; never logged.
        envelope: Use the JSON-envelope mode with ``response_format`` json_schema.
        timeout_s: Read timeout per request (seconds).
        retry: Retry policy for 429/5xx/connection errors.
        extra_body: Extra request fields (e.g. ``{"cache_prompt": true}`` for llama.cpp).
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
        timeout_s: float = 600.0,
        retry: RetryPolicy | None = None,
        extra_body: dict[str, Any] | None = None,
        parallel_tool_calls: bool = True,
    ) -> None:
        self.parallel_tool_calls = parallel_tool_calls
        self._name = name
        self.model = model
        self.envelope = envelope
        self._retry = retry or RetryPolicy()
        self._extra_body = extra_body or {}
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        url = httpx.URL(base_url.rstrip("/") + "/")
        self._client = httpx.AsyncClient(
            base_url=url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            # A proxy from the environment must not capture a model server on loopback.
            trust_env=url.host not in LOOPBACK_HOSTS,
        )
        self._ids = itertools.count(1)

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
            body["messages"] = map_envelope_messages(request.messages, request.tools)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "reply",
                    "strict": True,
                    "schema": envelope_schema(
                        request.tools,
                        require_call=request.tool_choice == "required",
                        max_calls=8 if parallel else 1,
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
        return body

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """Run one Chat Completions call (see ``Provider.complete``)."""
        body = self.build_body(request)
        data = await with_retries(
            lambda: self._post(body), self._retry, f"{self._name} chat completion"
        )
        content, calls, finish, usage = process_response(data)
        if not self.envelope:
            return AssistantReply(
                content=content, tool_calls=calls, finish_reason=finish, usage=usage
            )
        try:
            return envelope_reply(
                content, finish_reason=finish, usage=usage, id_prefix=f"call_{next(self._ids)}"
            )
        except EnvelopeError as exc:
            raise ProviderError(f"{self._name} returned no JSON envelope ({exc})") from None

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        response = await self._client.post("chat/completions", json=body)
        if response.status_code in {408, 409, 429} or response.status_code >= 500:
            raise RetryableStatus(response)
        if response.status_code >= 400:
            raise ProviderError(f"{self._name}: HTTP {response.status_code}: {response.text[:500]}")
        try:
            data = response.json()
        except ValueError:
            raise ProviderError(f"{self._name}: response is not JSON") from None
        if not isinstance(data, dict):
            raise ProviderError(f"{self._name}: response is not a JSON object")
        return data

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.aclose()
