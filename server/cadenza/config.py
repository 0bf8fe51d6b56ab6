"""Configuration: ``cadenza.toml`` (workspace, then user config dir), environment, init options.

Precedence for the model, highest first (DESIGN §4): the ``model`` argument of
``cadenza.startSession``, ``initializationOptions``, ``CADENZA_MODEL``, ``cadenza.toml``, the
embedded default. Secrets never live here: API keys come only from the environment.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError

APP_NAME = "cadenza"
DEFAULT_LOCAL_MODEL = "local/qwen2.5-coder-1.5b"


class ConfigError(Exception):
    """A config file or option set is invalid; the message names the file and field."""


class CadenzaConfig(BaseModel):
    """Settings of the server, validated (units in the field descriptions)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    model: str | None = Field(default=None, description="PROVIDER/MODEL, e.g. openai/gpt-4.1")
    max_steps: int = Field(
        default=25, ge=1, le=1000, alias="maxSteps", description="Model requests per session."
    )
    max_tokens: int | None = Field(
        default=None, ge=16, alias="maxTokens", description="Completion tokens per model request."
    )
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    context_size: int = Field(
        default=8192,
        ge=512,
        alias="contextSize",
        description="Context window of the local model (tokens).",
    )

    def merged(self, overrides: dict[str, Any], source: str) -> CadenzaConfig:
        """A copy with ``overrides`` applied (camelCase or snake_case keys).

        Raises:
            ConfigError: An override is unknown or invalid; the message names ``source``.
        """
        data = self.model_dump(exclude_unset=True)
        data.update(overrides)
        return _validate(data, source)


def _validate(data: dict[str, Any], source: str) -> CadenzaConfig:
    try:
        return CadenzaConfig.model_validate(data)
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{source}: {fields}") from None


def user_config_dir() -> Path:
    """The platform's per-user config folder for Cadenza."""
    return Path(platformdirs.user_config_dir(APP_NAME))


def load_config(workspace: Path | None) -> CadenzaConfig:
    """Load ``cadenza.toml`` from the user config dir, then the workspace, then the environment.

    Raises:
        ConfigError: A file is not valid TOML or has an invalid field.
    """
    config = CadenzaConfig()
    files = [user_config_dir() / "cadenza.toml"]
    if workspace is not None:
        files.append(workspace / "cadenza.toml")
    for path in files:
        if path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path}: {exc}") from None
            config = config.merged(data, str(path))
    env_model = os.environ.get("CADENZA_MODEL")
    if env_model:
        config = config.merged({"model": env_model}, "CADENZA_MODEL")
    return config
