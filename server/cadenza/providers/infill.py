"""Fill-in-the-middle calls to llama-server's ``/infill`` endpoint (inline completions).

llama.cpp's server builds the model's FIM prompt itself (prefix, suffix and middle tokens, and
for repository-aware models such as Qwen2.5-Coder the extra chunks as files before the prefix),
so the client sends text, never tokens. ``cache_prompt`` lets consecutive keystrokes reuse the
KV cache of the shared prefix. A model without FIM tokens is answered 501, which becomes
``InfillUnsupported``.

The reply is streamed: llama-server notices a closed connection when it next writes a token,
so a cancelled completion frees the slot at once (a whole-body request is only checked once a
second), and the time limit is the longest silence, which a cold prompt's evaluation may fill
but generation, a token every few tens of milliseconds, never does.

API: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (``POST /infill``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import EventSource, SSEError

from cadenza.providers.base import ProviderError

KEEPALIVE_S = 2.0
"""How long an idle connection is kept for the next request (seconds): less than
llama-server's 5 s, so a connection is never reused just as the server closes it."""
INFILL_SAMPLERS = ("top_k", "top_p", "infill", "temperature")
"""The samplers of llama.vim and llama.vscode for FIM (the ``infill`` sampler favours ending
the middle over rambling on), then temperature 0: the likeliest of what the infill sampler
keeps. Without it the last token is drawn at random among them (docs/lab/completions.md:
greedy passed as many HumanEval-Infilling problems or more, and the same answer twice)."""


@dataclass(frozen=True, kw_only=True)
class InfillChunk:
    """Extra context placed before the prefix: a piece of another file."""

    filename: str
    text: str


@dataclass(frozen=True, kw_only=True)
class InfillRequest:
    """One fill-in-the-middle request.

    Attributes:
        prefix: The lines before the cursor's line.
        prompt: The cursor's line up to the cursor (sent as ``prompt``: llama-server puts it
            after the prefix, tokenized apart, so the prefix's tokens and their cache stay the
            same while someone types on the line).
        suffix: The text after the cursor.
        extra: Chunks of other files, oldest first.
        n_predict: At most this many tokens.
        t_max_predict_ms: Generation stops at the first new line after this long (ms).
        stop: Stop strings (not included in the text).
        n_indent: A new line indented less than this ends the text (0: no limit).
        timeout_s: The longest the server may stay silent (seconds): before the first token
            (the prompt's evaluation, queueing behind a cancelled request) or between two.
    """

    prefix: str
    prompt: str
    suffix: str
    extra: tuple[InfillChunk, ...] = ()
    n_predict: int = 64
    t_max_predict_ms: int = 500
    stop: tuple[str, ...] = ()
    n_indent: int = 0
    timeout_s: float = 5.0


@dataclass(frozen=True, kw_only=True)
class InfillReply:
    """The model's middle and what it cost.

    Attributes:
        text: The generated text (stop strings excluded).
        tokens_predicted: Tokens generated.
        tokens_cached: Prompt tokens reused from the KV cache.
        tokens_evaluated: Prompt tokens evaluated (not found in the KV cache).
        prompt_ms: Prompt processing time (ms).
        predicted_ms: Generation time (ms).
    """

    text: str
    tokens_predicted: int = 0
    tokens_cached: int = 0
    tokens_evaluated: int = 0
    prompt_ms: float = 0.0
    predicted_ms: float = 0.0


class InfillUnsupported(ProviderError):
    """The model has no fill-in-the-middle tokens (llama-server answered 501)."""


class InfillTimeout(ProviderError):
    """The server stayed silent longer than the request's ``timeout_s``."""


class InfillClient:
    """The ``/infill`` endpoint of one llama-server.

    Args:
        base_url: ``http://127.0.0.1:PORT``.
        slot: The server slot to use (None: the server picks one).
    """

    def __init__(self, base_url: str, *, slot: int | None = None) -> None:
        self.base_url = base_url
        self.slot = slot
        self.requests_sent = 0
        """Requests that reached the server (for tests and logs)."""
        self._http = httpx.AsyncClient(
            base_url=base_url, trust_env=False, limits=httpx.Limits(keepalive_expiry=KEEPALIVE_S)
        )

    def body(self, request: InfillRequest) -> dict[str, Any]:
        """The JSON body of ``request``."""
        body: dict[str, Any] = {
            "input_prefix": request.prefix,
            "prompt": request.prompt,
            "input_suffix": request.suffix,
            "input_extra": [{"filename": c.filename, "text": c.text} for c in request.extra],
            "n_predict": request.n_predict,
            "t_max_predict_ms": request.t_max_predict_ms,
            "stop": list(request.stop),
            "n_indent": request.n_indent,
            "cache_prompt": True,
            "samplers": list(INFILL_SAMPLERS),
            "top_k": 40,
            "top_p": 0.99,
            "temperature": 0.0,
            "stream": True,
        }
        if self.slot is not None:
            body["id_slot"] = self.slot
        return body

    async def infill(self, request: InfillRequest) -> InfillReply:
        """Ask for the middle between ``prefix + prompt`` and ``suffix``.

        Cancelling the calling task closes the connection; llama-server then drops the task.

        Raises:
            InfillUnsupported: The model cannot fill in the middle.
            InfillTimeout: The server stayed silent longer than ``request.timeout_s``.
            ProviderError: The server is unreachable or answered an error.
        """
        self.requests_sent += 1
        try:
            try:
                return await self._attempt(request)
            except httpx.RemoteProtocolError:
                # A kept-alive connection the server closed as it was reused: once more, on a
                # new one (a server that is gone then fails to connect).
                return await self._attempt(request)
        except httpx.TimeoutException:
            raise InfillTimeout(
                f"the local model server said nothing for {request.timeout_s:g} s"
            ) from None
        except (httpx.HTTPError, SSEError) as exc:
            raise ProviderError(f"the local model server is unreachable: {exc}") from None

    async def _attempt(self, request: InfillRequest) -> InfillReply:
        async with self._http.stream(
            "POST", "/infill", json=self.body(request), timeout=request.timeout_s
        ) as response:
            if response.status_code != 200:
                await response.aread()
                raise _status_error(response)
            return await _read_reply(response)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()


async def _read_reply(response: httpx.Response) -> InfillReply:
    """The streamed middle: each event's ``content``, the figures of the one with ``stop``.

    Read to the stream's end (llama-server ends it after ``stop``), so the connection goes
    back to the pool.

    Raises:
        ProviderError: An error event, a malformed one, or the stream ended before ``stop``.
    """
    parts: list[str] = []
    final: dict[str, Any] | None = None
    async for event in EventSource(response).aiter_sse():
        try:
            data = json.loads(event.data) if event.data.strip() else None
        except ValueError:
            raise ProviderError(f"malformed completion event: {event.data[:200]!r}") from None
        if data is None or final is not None:
            continue
        if not isinstance(data, dict) or "error" in data:
            message = _error_message(data) or str(data)[:200]
            raise ProviderError(f"the local model server failed: {message}")
        content = data.get("content")
        if isinstance(content, str):
            parts.append(content)
        if data.get("stop") is True:
            final = data
    if final is None:
        raise ProviderError("the local model server ended the completion early")
    raw_timings = final.get("timings")
    timings: dict[str, Any] = raw_timings if isinstance(raw_timings, dict) else {}
    return InfillReply(
        text="".join(parts),
        tokens_predicted=_int(final.get("tokens_predicted")),
        tokens_cached=_int(final.get("tokens_cached")),
        tokens_evaluated=_int(timings.get("prompt_n")),
        prompt_ms=_float(timings.get("prompt_ms")),
        predicted_ms=_float(timings.get("predicted_ms")),
    )


def _status_error(response: httpx.Response) -> ProviderError:
    """The error for a reply that is not 200 (501: the model cannot fill in the middle)."""
    data = _json(response)
    if response.status_code == 501:
        return InfillUnsupported(_error_message(data) or "the model cannot fill in the middle")
    message = _error_message(data) or response.text[:200]
    return ProviderError(f"the local model server answered {response.status_code}: {message}")


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _error_message(data: Any) -> str | None:
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message.strip() if isinstance(message, str) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
