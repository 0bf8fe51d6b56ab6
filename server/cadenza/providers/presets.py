"""The known HTTP provider names and their defaults (base URL, API key variable, wire API)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True, kw_only=True)
class Preset:
    """Defaults of a known HTTP provider name.

    Attributes:
        kind: The wire API.
        base_url: Default base URL.
        base_url_env: Environment variable that overrides it, if any.
        api_key_env: Environment variable holding the API key, if any.
        envelope: JSON-envelope mode by default.
    """

    kind: Literal["openai", "anthropic"]
    base_url: str
    base_url_env: str | None = None
    api_key_env: str | None = None
    envelope: bool = False


PRESETS: dict[str, Preset] = {
    "openai": Preset(
        kind="openai",
        base_url=OPENAI_DEFAULT_BASE_URL,
        base_url_env="OPENAI_BASE_URL",
        api_key_env="OPENAI_API_KEY",
    ),
    "openai-envelope": Preset(
        kind="openai",
        base_url=OPENAI_DEFAULT_BASE_URL,
        base_url_env="OPENAI_BASE_URL",
        api_key_env="OPENAI_API_KEY",
        envelope=True,
    ),
    "ollama": Preset(kind="openai", base_url="http://127.0.0.1:11434/v1"),
    "openrouter": Preset(
        kind="openai", base_url="https://openrouter.ai/api/v1", api_key_env="OPENROUTER_API_KEY"
    ),
    "lmstudio": Preset(kind="openai", base_url="http://127.0.0.1:1234/v1"),
    "vllm": Preset(kind="openai", base_url="http://127.0.0.1:8000/v1", api_key_env="VLLM_API_KEY"),
    "llamacpp": Preset(
        kind="openai", base_url="http://127.0.0.1:8080/v1", api_key_env="LLAMA_API_KEY"
    ),
    "anthropic": Preset(
        kind="anthropic",
        base_url="https://api.anthropic.com",
        base_url_env="ANTHROPIC_BASE_URL",
        api_key_env="ANTHROPIC_API_KEY",
    ),
}
