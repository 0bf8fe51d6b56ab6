"""From a model name ``PROVIDER/MODEL`` to a ``Provider`` (docs/providers.md).

Known providers:

- ``openai``: any OpenAI-compatible server; ``OPENAI_BASE_URL`` (default the OpenAI API) and
  ``OPENAI_API_KEY`` from the environment. ``openai-envelope``: the same in JSON-envelope mode,
  for servers that enforce ``response_format`` JSON schemas.
- Presets of the same wire API: ``ollama`` (``OLLAMA_HOST``), ``openrouter``
  (``OPENROUTER_API_KEY``), ``lmstudio``, ``vllm`` (``VLLM_API_KEY``), ``llamacpp``
  (``LLAMA_API_KEY``), each with its usual local address.
- ``anthropic``: the Messages API; ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``.
- ``cli``: agent CLIs, ``cli/claude``, ``cli/codex``, ``cli/gemini``, ``cli/opencode``,
  ``cli/grok`` (``cli/claude/MODEL`` passes ``--model MODEL``); ``CADENZA_CLI_<NAME>``
  overrides the executable.
- ``local``: the embedded llama.cpp server.

``[providers.NAME]`` in ``cadenza.toml`` adjusts any of them (``base_url``, ``api_key_env``,
``headers``, ``stream``, ...) or defines a new name with ``kind = "openai"`` or ``"anthropic"``.
The base URL is, highest first: ``CADENZA_BASE_URL`` (what ``cadenza run --base-url`` sets), the
provider's own environment variable, the config, the preset's default. API keys are read only
from the environment.
"""

from __future__ import annotations

import os

from cadenza.config import DEFAULT_LOCAL_MODEL, CadenzaConfig, ConfigError, ProviderOptions
from cadenza.providers.anthropic import DEFAULT_MAX_TOKENS as ANTHROPIC_MAX_TOKENS
from cadenza.providers.anthropic import DEFAULT_TIMEOUT_S as ANTHROPIC_TIMEOUT_S
from cadenza.providers.anthropic import AnthropicProvider
from cadenza.providers.base import Provider
from cadenza.providers.cli import DEFAULT_TIMEOUT_S as CLI_TIMEOUT_S
from cadenza.providers.cli import CliProvider
from cadenza.providers.cli_adapters import ADAPTERS
from cadenza.providers.openai import DEFAULT_TIMEOUT_S as OPENAI_TIMEOUT_S
from cadenza.providers.openai import OpenAIProvider
from cadenza.providers.presets import PRESETS, Preset
from cadenza.providers.pricing import PricedProvider
from cadenza.providers.retry import RetryPolicy
from cadenza.secrets import secret_from_env

BASE_URL_ENV = "CADENZA_BASE_URL"
"""Overrides the base URL of the HTTP provider the model names (``cadenza run --base-url``)."""


KNOWN = (*PRESETS, "cli", "local")


def resolve_model_name(explicit: str | None, config: CadenzaConfig) -> str:
    """The model to use: the explicit argument, else the config (env included), else local."""
    return explicit or config.model or DEFAULT_LOCAL_MODEL


def split_model_name(name: str) -> tuple[str, str]:
    """``"openai/gpt-4.1"`` → ``("openai", "gpt-4.1")`` (the model may contain more slashes).

    Raises:
        ConfigError: The name has no ``PROVIDER/`` prefix.
    """
    provider, sep, model = name.partition("/")
    if not sep or not provider or not model:
        raise ConfigError(f"model {name!r} must be written PROVIDER/MODEL, e.g. openai/gpt-4.1")
    return provider, model


def _ollama_base_url() -> str | None:
    host = os.environ.get("OLLAMA_HOST")
    if not host:
        return None
    if not host.startswith(("http://", "https://")):
        host = f"http://{host}"
    return f"{host.rstrip('/')}/v1"


def _base_url(provider: str, preset: Preset | None, options: ProviderOptions) -> str:
    env_url = os.environ.get(preset.base_url_env) if preset and preset.base_url_env else None
    if provider == "ollama":
        env_url = _ollama_base_url()
    url = os.environ.get(BASE_URL_ENV) or env_url or options.base_url
    url = url or (preset.base_url if preset else None)
    if not url:
        raise ConfigError(f"provider {provider!r} needs base_url in [providers.{provider}]")
    return url


def provider_base_url(provider: str, config: CadenzaConfig) -> str:
    """The base URL a model of ``provider`` is called at (the same precedence as a session's).

    Raises:
        ConfigError: The provider is unknown and has no ``base_url``.
    """
    options = config.providers.get(provider) or ProviderOptions()
    return _base_url(provider, PRESETS.get(provider), options)


def _retry(options: ProviderOptions) -> RetryPolicy:
    return RetryPolicy(attempts=options.attempts) if options.attempts else RetryPolicy()


def _http_provider(name: str, provider: str, model: str, config: CadenzaConfig) -> Provider:
    options = config.providers.get(provider) or ProviderOptions()
    preset = PRESETS.get(provider)
    kind = options.kind or (preset.kind if preset else None)
    if kind is None:
        raise ConfigError(
            f"unknown provider {provider!r} in the model {name!r}. The known providers are "
            f"{', '.join(KNOWN)} (`cadenza models list` shows the local models). For another "
            f'server, give [providers.{provider}] in cadenza.toml a kind ("openai" or '
            f'"anthropic") and a base_url'
        )
    base_url = _base_url(provider, preset, options)
    api_key = secret_from_env(options.api_key_env or (preset.api_key_env if preset else None))
    if kind == "anthropic":
        return AnthropicProvider(
            name=name,
            model=model,
            api_key=api_key,
            base_url=base_url,
            stream=options.stream if options.stream is not None else True,
            max_tokens=config.max_tokens or ANTHROPIC_MAX_TOKENS,
            retry=_retry(options),
            headers=options.headers,
            extra_body=options.extra_body,
            timeout_s=options.timeout_s or ANTHROPIC_TIMEOUT_S,
        )
    envelope = options.envelope
    if envelope is None:
        envelope = bool(preset and preset.envelope)
    return OpenAIProvider(
        name=name,
        base_url=base_url,
        model=model,
        api_key=api_key,
        envelope=envelope,
        stream=options.stream if options.stream is not None else True,
        retry=_retry(options),
        headers=options.headers,
        extra_body=options.extra_body,
        timeout_s=options.timeout_s or OPENAI_TIMEOUT_S,
    )


def _cli_provider(name: str, model: str, config: CadenzaConfig) -> Provider:
    adapter_name, _, cli_model = model.partition("/")
    adapter = ADAPTERS.get(adapter_name)
    if adapter is None:
        raise ConfigError(
            f"unknown CLI {adapter_name!r} in {name!r}; known: "
            + ", ".join(f"cli/{a}" for a in ADAPTERS)
        )
    options = config.providers.get(f"cli/{adapter_name}") or ProviderOptions()
    return CliProvider(
        name=name,
        adapter=adapter,
        model=cli_model or None,
        executable=os.environ.get(adapter.env_var) or options.executable,
        args=options.args,
        timeout_s=options.timeout_s or CLI_TIMEOUT_S,
    )


def http_base_url(name: str, config: CadenzaConfig) -> str | None:
    """The base URL the HTTP provider of ``name`` calls (None: ``local`` or ``cli``).

    Raises:
        ConfigError: A malformed name or a custom provider without ``base_url``.
    """
    provider, _ = split_model_name(name)
    if provider in ("local", "cli"):
        return None
    options = config.providers.get(provider) or ProviderOptions()
    return _base_url(provider, PRESETS.get(provider), options)


def create_provider(name: str, config: CadenzaConfig) -> Provider:
    """Build the provider for ``name`` (``PROVIDER/MODEL``).

    Raises:
        ConfigError: Unknown provider or CLI, malformed name, or a custom provider without
            ``kind`` or ``base_url``.
    """
    provider, model = split_model_name(name)
    if provider == "local":
        from cadenza.providers.local import LocalProvider

        return LocalProvider(name=name, model=model, config=config)
    if provider == "cli":
        return _cli_provider(name, model, config)
    made = _http_provider(name, provider, model, config)
    options = config.providers.get(provider)
    price = options.prices.get(model) if options is not None else None
    return PricedProvider(made, price) if price is not None else made
