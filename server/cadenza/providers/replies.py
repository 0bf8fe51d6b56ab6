"""What every wire adapter does alike when it turns a vendor's answer into an ``AssistantReply``.

The vendors differ in their words (``finish_reason`` or ``stop_reason``; an ``error`` object, an
``error`` event or a CLI's error line; usage with or without cache counts) but not in what
Cadenza makes of them, so those rules live here once instead of once per adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cadenza.messages import FinishReason
from cadenza.providers.base import ProviderError
from cadenza.secrets import redact, redact_then_cut


def finish_reason(
    table: Mapping[str, FinishReason], raw: object, *, has_calls: bool
) -> FinishReason:
    """A vendor's raw finish reason through its table.

    Anything the table does not know counts as ``stop``; a reply that carries tool calls but
    says ``stop`` is a ``tool_calls`` reply (Ollama and others say "stop" next to tool calls),
    so the engine runs the calls instead of ending the turn.

    Args:
        table: The vendor's reasons → Cadenza's.
        raw: The reason as the vendor sent it (any JSON value, or None).
        has_calls: Whether the reply carries at least one tool call.
    """
    finish = table.get(str(raw), "stop")
    if has_calls and finish == "stop":
        return "tool_calls"
    return finish


def reported_error(who: str, source: str, detail: object) -> ProviderError:
    """The error for an answer in which the vendor itself reports a failure.

    Args:
        who: ``PROVIDER/MODEL``.
        source: Who reported it, as the person knows it (``server``, ``API``, ``CLI``).
        detail: The vendor's error object or text; secrets in it are redacted.
    """
    return ProviderError(redact(f"{who}: the {source} reported an error: {detail}"))


def malformed_reply(who: str, missing: str, data: object) -> ProviderError:
    """The error for a whole reply body that lacks what every reply has (``choices``, ...).

    Args:
        who: ``PROVIDER/MODEL``.
        missing: What is missing, as the wire names it.
        data: The body; its start is quoted, secrets redacted.
    """
    return ProviderError(
        f"{who}: malformed response: no {missing} ({redact_then_cut(str(data), 200, '')})"
    )


CACHE_INPUT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""Anthropic-shaped usage splits the prompt into uncached input, cache writes and cache reads."""


def cached_prompt_tokens(usage: Mapping[str, Any]) -> int:
    """Prompt tokens of an Anthropic-shaped ``usage`` (the Messages API, and the claude CLI).

    The prompt is the sum of all three counts: a step that reads the previous step's prefix
    from the cache still fills that much of the context.
    """
    return sum(int(usage.get(key) or 0) for key in CACHE_INPUT_KEYS)
