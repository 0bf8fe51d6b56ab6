"""The server's configuration at ``initialize``: files, environment, ``initializationOptions``.

Invalid settings never stop the server (jedi-language-server's rule): each problem becomes a
warning shown to the person, and the layer that failed is skipped, so defaults apply. The
folder's settings that need trust apply only in a trusted folder (``host.trust``,
``lsp.trust``).
Precedence, highest first: the ``model`` of ``cadenza.startSession`` (applied per
session), ``initializationOptions``, ``CADENZA_MODEL``, ``cadenza.toml``, the embedded default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cadenza.config import CadenzaConfig, ConfigError, load_config
from cadenza.host.trust import FolderTrust, TrustStore, folder_trust

SOURCE = "initializationOptions"


TRUST_OPTION = "trustWorkspace"
"""``initializationOptions.trustWorkspace: true``: the client's person trusts the folder for
this server's life (``cadenza run --trust-workspace``); nothing is recorded."""


@dataclass(frozen=True, kw_only=True)
class LoadedConfig:
    """The effective configuration, the warnings met on the way, and the folder's trust.

    ``trust`` is None without a folder; when it is ``undecided``, the folder's held settings
    were left out and the person is to be asked (``lsp.trust``).
    """

    config: CadenzaConfig
    warnings: list[str] = field(default_factory=list)
    trust: FolderTrust | None = None


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


def _granted(options: Any, warnings: list[str]) -> tuple[Any, bool]:
    """``options`` without ``trustWorkspace``, and whether it granted trust."""
    if not isinstance(options, dict) or TRUST_OPTION not in options:
        return options, False
    rest = {k: v for k, v in options.items() if k != TRUST_OPTION}
    value = options[TRUST_OPTION]
    if not isinstance(value, bool):
        warnings.append(f"Cadenza ignored {SOURCE}.{TRUST_OPTION}: expected true or false")
        return rest, False
    return rest, value


RULE_KEYS = ("allow", "deny")
"""``[permissions]`` keys only the person's own ``cadenza.toml`` sets."""


def _without_rules(options: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """``options`` without permission rules: they come from the person's own file only."""
    table = options.get("permissions")
    if not isinstance(table, dict) or not any(key in table for key in RULE_KEYS):
        return options
    warnings.append(
        f"Cadenza ignored {SOURCE}.permissions allow/deny: permission rules are read from "
        "your own cadenza.toml only"
    )
    kept = {k: v for k, v in table.items() if k not in RULE_KEYS}
    return {**options, "permissions": kept}


def load_server_config(
    root: Path | None, options: Any, *, store: TrustStore | None = None, granted: bool = False
) -> LoadedConfig:
    """Load ``cadenza.toml`` and the environment for ``root``, then apply ``options``.

    Args:
        root: The workspace folder of ``initialize`` (its ``cadenza.toml`` is read), or None.
        options: ``InitializeParams.initializationOptions`` as received: a JSON object with
            ``CadenzaConfig`` fields (camelCase or snake_case) and ``trustWorkspace``, or null.
        store: The recorded trust decisions (default: the user's).
        granted: Trust the folder whatever was recorded (the person just said so).

    Returns:
        The configuration; ``warnings`` says what was ignored and why.
    """
    warnings: list[str] = []
    options, by_client = _granted(options, warnings)
    trust = (
        folder_trust(root, granted=granted or by_client, store=store) if root is not None else None
    )
    try:
        config = load_config(
            root,
            warnings,
            trusted=trust is not None and trust.trusted,
            note_held=trust is None or not trust.undecided,  # asked first (lsp.trust)
        )
    except ConfigError as exc:
        warnings.append(f"Cadenza ignored its config files: {exc}")
        config = _environment_only(warnings)
    if options is None:
        return LoadedConfig(config=config, warnings=warnings, trust=trust)
    if not isinstance(options, dict):
        warnings.append(f"Cadenza ignored {SOURCE}: expected a JSON object")
        return LoadedConfig(config=config, warnings=warnings, trust=trust)
    known = _known_keys()
    unknown = sorted(k for k in options if k not in known)
    if unknown:
        # One unknown key (a newer client, a typo) must not throw away the valid ones.
        warnings.append(f"Cadenza ignored unknown settings: {', '.join(map(str, unknown))}")
        options = {k: v for k, v in options.items() if k in known}
    options = _without_rules(options, warnings)
    try:
        config = config.merged(options, SOURCE)
    except ConfigError as exc:
        warnings.append(f"Cadenza ignored invalid settings, using defaults: {exc}")
    return LoadedConfig(config=config, warnings=warnings, trust=trust)
