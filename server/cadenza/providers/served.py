"""The models the person's own model servers already have: Ollama and OpenAI-compatible ones.

Asked, each time a picker is filled, of:

- Ollama (``GET /api/tags``), when it is configured: ``[providers.ollama]`` in the settings or
  ``OLLAMA_HOST`` in the environment;
- every other provider configured in ``[providers.NAME]`` that speaks OpenAI's wire API
  (``GET {base_url}/models``): LM Studio, vLLM, llama.cpp's server, a second Ollama... when its
  base URL is on this machine or the local network. Hosted APIs are not asked: their lists are
  long and a person names the model they use.

A server that does not answer within ``TIMEOUT_S``, or answers with something else, adds
nothing (logged); a picker must open anyway.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
from dataclasses import dataclass
from typing import Any

import httpx

from cadenza.config import CadenzaConfig, ConfigError, ProviderOptions
from cadenza.providers.http import LOOPBACK_HOSTS
from cadenza.providers.presets import PRESETS
from cadenza.providers.registry import provider_base_url
from cadenza.secrets import secret_from_env

TIMEOUT_S = 2.0
"""Bound on one server's answer (seconds)."""
OLLAMA = "ollama"
NAMES = {"ollama": "Ollama", "lmstudio": "LM Studio", "vllm": "vLLM", "llamacpp": "llama.cpp"}
"""How the known servers are called in a picker."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ServedModel:
    """A model a server of the person's has.

    Attributes:
        id: ``PROVIDER/MODEL``, as a session takes it.
        where: Where it runs, for a person (``Ollama at 127.0.0.1:11434``).
    """

    id: str
    where: str


def servers(config: CadenzaConfig) -> list[tuple[str, str]]:
    """The servers to ask: ``(provider, base_url)``, Ollama first."""
    names = [n for n in config.providers if not n.startswith("cli")]
    if os.environ.get("OLLAMA_HOST") and OLLAMA not in names:
        names.insert(0, OLLAMA)
    out = []
    for name in sorted(names, key=lambda n: n != OLLAMA):
        options = config.providers.get(name) or ProviderOptions()
        preset = PRESETS.get(name)
        if (options.kind or (preset.kind if preset else None)) != "openai":
            continue
        try:
            url = provider_base_url(name, config)
        except ConfigError:
            continue
        if name == OLLAMA or _own_network(url):
            out.append((name, url))
    return out


async def served_models(config: CadenzaConfig) -> list[ServedModel]:
    """Every model the configured servers list, server by server, each server's in its order."""
    asked = servers(config)
    if not asked:
        return []
    async with httpx.AsyncClient(timeout=TIMEOUT_S, trust_env=False) as client:
        lists = await asyncio.gather(*(_ask(client, n, u, config) for n, u in asked))
    return [model for found in lists for model in found]


async def _ask(
    client: httpx.AsyncClient, provider: str, base_url: str, config: CadenzaConfig
) -> list[ServedModel]:
    url = httpx.URL(base_url)
    where = f"{NAMES.get(provider, provider)} at {url.host}:{url.port or 80}"
    try:
        if provider == OLLAMA:
            root = base_url.rstrip("/").removesuffix("/v1")
            response = await client.get(f"{root}/api/tags")
            response.raise_for_status()
            ids = [str(m["name"]) for m in response.json()["models"]]
        else:
            response = await client.get(
                base_url.rstrip("/") + "/models", headers=_auth(provider, config)
            )
            response.raise_for_status()
            ids = [str(m["id"]) for m in response.json()["data"]]
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        log.info("no model list from %s (%s): %s", where, base_url, exc or type(exc).__name__)
        return []
    return [ServedModel(id=f"{provider}/{model}", where=where) for model in ids if model]


def _auth(provider: str, config: CadenzaConfig) -> dict[str, str]:
    options = config.providers.get(provider) or ProviderOptions()
    preset = PRESETS.get(provider)
    key = secret_from_env(options.api_key_env or (preset.api_key_env if preset else None))
    headers: dict[str, Any] = dict(options.headers)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def _own_network(base_url: str) -> bool:
    """Whether the URL's host is this machine or on a private network (not a hosted API)."""
    try:
        host = httpx.URL(base_url).host
    except httpx.InvalidURL:
        return False
    if host in LOOPBACK_HOSTS or host.endswith((".local", ".lan", ".internal")) or "." not in host:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address.is_link_local
