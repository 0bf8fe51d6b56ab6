"""Fill-in-the-middle calls to llama-server's ``/infill`` endpoint (inline completions).

llama.cpp's server builds the model's FIM prompt itself (prefix, suffix and middle tokens, and
for repository-aware models such as Qwen2.5-Coder the extra chunks as files before the prefix),
so the client sends text, never tokens. ``cache_prompt`` lets consecutive keystrokes reuse the
KV cache of the shared prefix. A model without FIM tokens is answered 501, which becomes
``InfillUnsupported``.

API: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (``POST /infill``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from cadenza.providers.base import ProviderError

INFILL_SAMPLERS = ("top_k", "top_p", "infill")
"""The samplers llama.vim and llama.vscode use for FIM: the ``infill`` sampler favours ending
the middle over rambling on."""


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
        prompt: The cursor's line up to the cursor (sent as ``prompt``, after the middle token,
            so the cached prefix survives typing on one line).
        suffix: The text after the cursor.
        extra: Chunks of other files, oldest first.
        n_predict: At most this many tokens.
        t_max_predict_ms: Generation stops at the first new line after this long (ms).
        stop: Stop strings (not included in the text).
        n_indent: A new line indented less than this ends the text (0: no limit).
        timeout_s: The whole HTTP call's limit (seconds).
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
        prompt_ms: Prompt processing time (ms).
        predicted_ms: Generation time (ms).
    """

    text: str
    tokens_predicted: int = 0
    tokens_cached: int = 0
    prompt_ms: float = 0.0
    predicted_ms: float = 0.0


class InfillUnsupported(ProviderError):
    """The model has no fill-in-the-middle tokens (llama-server answered 501)."""


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
        self._http = httpx.AsyncClient(base_url=base_url, trust_env=False)

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
            "stream": False,
        }
        if self.slot is not None:
            body["id_slot"] = self.slot
        return body

    async def infill(self, request: InfillRequest) -> InfillReply:
        """Ask for the middle between ``prefix + prompt`` and ``suffix``.

        Cancelling the calling task closes the connection; llama-server then drops the task.

        Raises:
            InfillUnsupported: The model cannot fill in the middle.
            ProviderError: The server is unreachable, timed out, or answered an error.
        """
        self.requests_sent += 1
        try:
            response = await self._http.post(
                "/infill", json=self.body(request), timeout=request.timeout_s
            )
        except httpx.TimeoutException:
            raise ProviderError(
                f"the completion took longer than {request.timeout_s:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise ProviderError(f"the local model server is unreachable: {exc}") from None
        data = _json(response)
        if response.status_code == 501:
            raise InfillUnsupported(_error_message(data) or "the model cannot fill in the middle")
        if response.status_code != 200 or not isinstance(data, dict):
            message = _error_message(data) or response.text[:200]
            raise ProviderError(
                f"the local model server answered {response.status_code}: {message}"
            )
        raw_timings = data.get("timings")
        timings: dict[str, Any] = raw_timings if isinstance(raw_timings, dict) else {}
        content = data.get("content")
        return InfillReply(
            text=content if isinstance(content, str) else "",
            tokens_predicted=_int(data.get("tokens_predicted")),
            tokens_cached=_int(data.get("tokens_cached")),
            prompt_ms=_float(timings.get("prompt_ms")),
            predicted_ms=_float(timings.get("predicted_ms")),
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()


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
