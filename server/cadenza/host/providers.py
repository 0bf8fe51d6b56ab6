"""The providers sessions share: one per model name, closed when the host stops.

Creating a provider can be costly (the ``local`` provider owns a ``llama-server`` process),
so the sessions of one server (or one ACP connection) that use the same model share one.
"""

from __future__ import annotations

import logging

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.host.errors import SetupError
from cadenza.providers.base import Provider
from cadenza.providers.registry import create_provider

log = logging.getLogger(__name__)


class ProviderPool:
    """Providers by model name (``PROVIDER/MODEL``), made on first use."""

    def __init__(self) -> None:
        self._providers: dict[str, Provider] = {}

    def get(self, model: str, config: CadenzaConfig) -> Provider:
        """The provider of ``model``, made with ``config`` the first time it is asked for.

        Raises:
            SetupError: The model is malformed or names an unknown provider.
        """
        provider = self._providers.get(model)
        if provider is None:
            try:
                provider = create_provider(model, config)
            except ConfigError as exc:
                raise SetupError(str(exc)) from None
            self._providers[model] = provider
        return provider

    async def aclose(self) -> None:
        """Close every provider (their child processes included); a failure is logged."""
        providers = list(self._providers.values())
        self._providers.clear()
        for provider in providers:
            try:
                await provider.aclose()
            except Exception:
                log.exception("closing provider %s failed", provider.name)
