"""The server's configuration at ``initialize``: files, environment, ``initializationOptions``.

Invalid settings never stop the server (jedi-language-server's rule): each problem becomes a
warning shown to the person, and the layer that failed is skipped, so defaults apply.
Precedence (DESIGN §4), highest first: the ``model`` of ``cadenza.startSession`` (applied per
session), ``initializationOptions``, ``CADENZA_MODEL``, ``cadenza.toml``, the embedded default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cadenza.config import CadenzaConfig, ConfigError, load_config

SOURCE = "initializationOptions"


@dataclass(frozen=True, kw_only=True)
class LoadedConfig:
    """The effective configuration and the warnings met on the way."""

    config: CadenzaConfig
    warnings: list[str] = field(default_factory=list)


def _environment_only(warnings: list[str]) -> CadenzaConfig:
    """Defaults plus ``CADENZA_MODEL``, for when the config files are unreadable."""
    config = CadenzaConfig()
    model = os.environ.get("CADENZA_MODEL")
    if model:
        try:
            config = config.merged({"model": model}, "CADENZA_MODEL")
        except ConfigError as exc:
            warnings.append(str(exc))
    return config


def _known_keys() -> set[str]:
    """Field names and camelCase aliases of ``CadenzaConfig``."""
    keys: set[str] = set()
    for name, info in CadenzaConfig.model_fields.items():
        keys.add(name)
        if info.alias:
            keys.add(info.alias)
    return keys


def load_server_config(root: Path | None, options: Any) -> LoadedConfig:
    """Load ``cadenza.toml`` and the environment for ``root``, then apply ``options``.

    Args:
        root: The workspace folder of ``initialize`` (its ``cadenza.toml`` is read), or None.
        options: ``InitializeParams.initializationOptions`` as received: a JSON object with
            ``CadenzaConfig`` fields (camelCase or snake_case), or null.

    Returns:
        The configuration; ``warnings`` says what was ignored and why.
    """
    warnings: list[str] = []
    try:
        config = load_config(root, warnings)
    except ConfigError as exc:
        warnings.append(f"Cadenza ignored its config files: {exc}")
        config = _environment_only(warnings)
    if options is None:
        return LoadedConfig(config=config, warnings=warnings)
    if not isinstance(options, dict):
        warnings.append(f"Cadenza ignored {SOURCE}: expected a JSON object")
        return LoadedConfig(config=config, warnings=warnings)
    known = _known_keys()
    unknown = sorted(k for k in options if k not in known)
    if unknown:
        # One unknown key (a newer client, a typo) must not throw away the valid ones.
        warnings.append(f"Cadenza ignored unknown settings: {', '.join(map(str, unknown))}")
        options = {k: v for k, v in options.items() if k in known}
    try:
        config = config.merged(options, SOURCE)
    except ConfigError as exc:
        warnings.append(f"Cadenza ignored invalid settings, using defaults: {exc}")
    return LoadedConfig(config=config, warnings=warnings)
