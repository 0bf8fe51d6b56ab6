"""From a model name ``PROVIDER/MODEL`` to a ``Provider`` (DESIGN §4).

Known providers: ``openai`` (any OpenAI-compatible server; ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` from the environment), ``openai-envelope`` (the same with the JSON-envelope
mode, for servers that enforce ``response_format`` JSON schemas), ``ollama`` (its OpenAI-compatible
endpoint, ``OLLAMA_HOST``), and ``local`` (the embedded llama.cpp server).
"""

from __future__ import annotations

import os

from cadenza.config import DEFAULT_LOCAL_MODEL, CadenzaConfig, ConfigError
from cadenza.providers.base import Provider
from cadenza.providers.openai import OpenAIProvider

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def resolve_model_name(explicit: str | None, config: CadenzaConfig) -> str:
    """The model to use: the explicit argument, else the config (env included), else local."""
    return explicit or config.model or DEFAULT_LOCAL_MODEL


def split_model_name(name: str) -> tuple[str, str]:
    """``"openai/gpt-4.1"`` → ``("openai", "gpt-4.1")``.

    Raises:
        ConfigError: The name has no ``PROVIDER/`` prefix.
    """
    provider, sep, model = name.partition("/")
    if not sep or not provider or not model:
        raise ConfigError(f"model {name!r} must be written PROVIDER/MODEL, e.g. openai/gpt-4.1")
    return provider, model


def create_provider(name: str, config: CadenzaConfig) -> Provider:
    """Build the provider for ``name`` (``PROVIDER/MODEL``).

    Raises:
        ConfigError: Unknown provider or malformed name.
    """
    provider, model = split_model_name(name)
    if provider in {"openai", "openai-envelope"}:
        return OpenAIProvider(
            name=name,
            base_url=os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL,
            model=model,
            api_key=os.environ.get("OPENAI_API_KEY"),
            envelope=provider == "openai-envelope",
        )
    if provider == "ollama":
        host = os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        if not host.startswith(("http://", "https://")):
            host = f"http://{host}"
        return OpenAIProvider(name=name, base_url=f"{host.rstrip('/')}/v1", model=model)
    if provider == "local":
        from cadenza.providers.local import LocalProvider

        return LocalProvider(name=name, model=model, config=config)
    raise ConfigError(
        f"unknown provider {provider!r} in {name!r}; known: openai, openai-envelope, ollama, local"
    )
