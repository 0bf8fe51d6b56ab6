"""What a model call cost: as the provider reported it, else from a configured price table.

Some providers report the cost of each call (OpenRouter's ``usage.cost``, in US dollars); it is
kept as is. Otherwise a price table in the provider's settings
(``[providers.NAME.prices."MODEL"] input = 2.0, output = 8.0, currency = "USD"``: per million
prompt and completion tokens) gives it. Without either, a call has no cost: none is ever
guessed.
"""

from __future__ import annotations

from cadenza.config import ModelPrice
from cadenza.messages import AssistantReply
from cadenza.providers.base import ModelRequest, Provider, TextSink

PER = 1_000_000


def priced(reply: AssistantReply, price: ModelPrice) -> AssistantReply:
    """``reply`` with its usage's cost from ``price`` (a cost the provider reported is kept)."""
    usage = reply.usage
    if usage is None or usage.cost is not None:
        return reply
    amount = (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / PER
    cost = usage.model_copy(update={"cost": amount, "currency": price.currency})
    return reply.model_copy(update={"usage": cost})


class PricedProvider:
    """A provider whose replies carry their cost from a price table (``priced``)."""

    def __init__(self, inner: Provider, price: ModelPrice) -> None:
        self._inner = inner
        self._price = price

    @property
    def name(self) -> str:
        """The inner provider's ``PROVIDER/MODEL``."""
        return self._inner.name

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """The inner provider's reply, priced."""
        return priced(await self._inner.complete(request, on_text), self._price)

    async def aclose(self) -> None:
        """Close the inner provider."""
        await self._inner.aclose()
