"""The server's configuration at ``initialize``: files, environment, ``initializationOptions``.

Invalid settings never stop the server (jedi-language-server's rule): each problem becomes a
warning shown to the person, and the layer that failed is skipped, so defaults apply. The
folder's settings that need trust apply only in a trusted folder (``host.trust``,
``lsp.trust``).

``initializationOptions`` come from the editor, and editors merge a workspace's own settings
into them (a repository's ``.vscode/settings.json``, ``.zed/settings.json``,
``.helix/languages.toml``, a Sublime project file), so they may only tighten what the person's
own ``cadenza.toml`` decided: more tools that ask first, never fewer (``permissions.gated``,
``mcp.gated``, a server's ``gated``), never ``review = "auto"`` over the person's
``"confirm"``, no permission rules (``permissions.allow`` / ``deny``), and no trust in the
folder (``trustWorkspace``: ``cadenza serve --trust-workspace FOLDER`` is the person's own
command line). The settings a workspace's ``cadenza.toml`` may set only in a trusted folder
(``config.workspace``: where requests go, programs Cadenza runs) count from them only in a
trusted folder too, or where they repeat the person's own value: ``providers``,
``mcp.servers``, ``checks.test``, ``browser`` and ``loop`` (which may send files to a hosted
model unasked). ``model`` and each entry of ``models`` (what the pickers offer) count from
them the same way when they name a model file (``local/`` with a path or a ``.gguf`` name:
llama-server would load a file the repository ships), another provider than the person's, or
no model name at all (``model_kept``); a model of the catalogue on the person's own provider
stays, as the editors' model pickers send it. Each value left out is named in a warning.
Precedence, highest first: the ``model`` of ``cadenza.startSession`` (applied per
session), ``initializationOptions``, ``CADENZA_MODEL``, ``cadenza.toml``, the embedded default.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cadenza.config import DEFAULT_LOCAL_MODEL, CadenzaConfig, ConfigError, load_config
from cadenza.host.trust import FolderTrust, TrustStore, folder_trust

SOURCE = "initializationOptions"


TRUST_OPTION = "trustWorkspace"
"""``initializationOptions.trustWorkspace``: refused (a workspace's settings can reach it)."""


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


def _without_trust(options: Any, warnings: list[str]) -> Any:
    """``options`` without ``trustWorkspace``: only the person trusts a folder."""
    if not isinstance(options, dict) or TRUST_OPTION not in options:
        return options
    if options[TRUST_OPTION] is not False:
        warnings.append(
            f"Cadenza ignored {SOURCE}.{TRUST_OPTION}: editor settings cannot trust a folder "
            "(a workspace's own settings reach them); answer Cadenza's question about the "
            "folder, or run `cadenza trust FOLDER`"
        )
    return {k: v for k, v in options.items() if k != TRUST_OPTION}


RULE_KEYS = ("allow", "deny")
"""``[permissions]`` keys only the person's own ``cadenza.toml`` sets."""


def _table(options: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = options.get(key)
    return dict(value) if isinstance(value, dict) else None


def _without_rules(options: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """``options`` without permission rules: they come from the person's own file only."""
    table = _table(options, "permissions")
    if table is None or not any(key in table for key in RULE_KEYS):
        return options
    warnings.append(
        f"Cadenza ignored {SOURCE}.permissions allow/deny: permission rules are read from "
        "your own cadenza.toml only"
    )
    kept = {k: v for k, v in table.items() if k not in RULE_KEYS}
    return {**options, "permissions": kept}


def _gated_kept(
    options: dict[str, Any], config: CadenzaConfig, warnings: list[str]
) -> dict[str, Any]:
    """``permissions.gated`` may add tools that ask first, never drop one the config has."""
    table = _table(options, "permissions")
    given = table.get("gated") if table is not None else None
    if table is None or not isinstance(given, list):
        return options  # absent, or invalid: validation says so
    dropped = [tool for tool in config.permissions.gated if tool not in given]
    if dropped:
        warnings.append(
            f"Cadenza still asks before {', '.join(dropped)}: {SOURCE}.permissions.gated may "
            "add tools that ask first, not remove them (your own cadenza.toml can)"
        )
    table["gated"] = list(dict.fromkeys([*config.permissions.gated, *given]))
    return {**options, "permissions": table}


def _unasked(config: CadenzaConfig, name: object) -> bool:
    """Whether the person's config lets the tools of MCP server ``name`` run unasked."""
    for server in config.mcp.servers:
        if server.name == name and server.gated is not None:
            return not server.gated
    return not config.mcp.gated


def _server_gated_kept(server: Any, config: CadenzaConfig, refused: list[str]) -> Any:
    """One MCP server of the options, without ``gated = false`` unless the config says so."""
    if not isinstance(server, dict) or server.get("gated") is not False:
        return server
    name = server.get("name")
    if _unasked(config, name):
        return server
    refused.append(f"the gated of MCP server {name!r}")
    return {k: v for k, v in server.items() if k != "gated"}


def _mcp_gated_kept(
    options: dict[str, Any], config: CadenzaConfig, warnings: list[str]
) -> dict[str, Any]:
    """``mcp.gated`` and a server's ``gated`` may be ``false`` only where the config says so."""
    table = _table(options, "mcp")
    if table is None:
        return options
    refused: list[str] = []
    if table.get("gated") is False and config.mcp.gated:
        del table["gated"]
        refused.append("mcp.gated")
    servers = table.get("servers")
    if isinstance(servers, list):
        table["servers"] = [_server_gated_kept(server, config, refused) for server in servers]
    if refused:
        warnings.append(
            f"Cadenza ignored {SOURCE} {', '.join(refused)} = false: MCP tools still ask "
            "before each call (your own cadenza.toml can turn that off)"
        )
    return {**options, "mcp": table}


def _review_kept(
    options: dict[str, Any], config: CadenzaConfig, warnings: list[str]
) -> dict[str, Any]:
    """``review = "auto"`` never overrides the person's ``"confirm"``."""
    if options.get("review") != "auto" or config.review != "confirm":
        return options
    warnings.append(
        f'Cadenza ignored {SOURCE}.review = "auto": your cadenza.toml has review = "confirm", '
        "so you still review each change"
    )
    return {k: v for k, v in options.items() if k != "review"}


HELD_OPTIONS: tuple[tuple[str, str | None], ...] = (
    ("providers", None),
    ("mcp", "servers"),
    ("checks", "test"),
    ("browser", None),
    ("loop", None),
)
"""Settings (section, key in it) that count only in a trusted folder or repeating the config."""


def _probe(options: dict[str, Any], config: CadenzaConfig, section: str, key: str | None) -> Any:
    """The override that sets only ``section`` (or its ``key``) as ``options`` give it."""
    if key is None:
        return {section: options[section]}
    ours = getattr(config, section).model_dump(by_alias=True, exclude_unset=True)
    return {section: {**ours, key: options[section][key]}}


def _changes(config: CadenzaConfig, probe: dict[str, Any], section: str, key: str | None) -> bool:
    """Whether ``probe`` changes ``config``'s ``section`` (or its ``key``); invalid counts."""
    try:
        probed = config.merged(probe, SOURCE)
    except ConfigError:
        return True
    before, after = getattr(config, section), getattr(probed, section)
    if key is not None:
        before, after = getattr(before, key), getattr(after, key)
    if section == "mcp":  # a server's ``gated`` only tightens here (``_mcp_gated_kept``)
        before, after = ([s.model_dump(exclude={"gated"}) for s in v] for v in (before, after))
    return bool(before != after)


def _without_held(
    options: dict[str, Any], config: CadenzaConfig, section: str, key: str | None
) -> dict[str, Any]:
    """``options`` with ``section`` (or its ``key``) back at the config's own value."""
    if key is None:
        return {k: v for k, v in options.items() if k != section}
    table = {k: v for k, v in options[section].items() if k != key}
    ours = getattr(config, section).model_dump(by_alias=True, exclude_unset=True)
    if key in ours:  # ``mcp`` replaces the whole table: keep the person's servers
        table[key] = ours[key]
    return {**options, section: table}


MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]*")
"""A ``local/`` model of the catalogue or the pulled models: a name, never a path."""

MODEL_ID = re.compile(r"[^\s()\[\]{}<>]+")
"""Any provider's model id: no spaces or brackets (a picker's label puts them around it)."""


def _provider(model: str) -> str:
    """The provider part of ``PROVIDER/MODEL``; ``cli/ADAPTER`` for a CLI (each runs a program)."""
    provider, _, rest = model.partition("/")
    return f"cli/{rest.partition('/')[0]}" if provider == "cli" else provider


def _model_refusal(model: str, config: CadenzaConfig) -> str | None:
    """Why ``model`` of the options may not replace or join the person's, or None when it may."""
    if model == config.model or model in config.models:
        return None  # the person's own choice, repeated
    provider, _, name = model.partition("/")
    if not MODEL_ID.fullmatch(name):
        return "it is not a model name (it has spaces or brackets)"
    if provider == "local" and (not MODEL_NAME.fullmatch(name) or name.lower().endswith(".gguf")):
        return "it names a model file, not a model of Cadenza's list"
    ours = _provider(config.model or DEFAULT_LOCAL_MODEL)
    if _provider(model) != ours:
        return f"it switches from your provider ({ours}) to another"
    return None


def _refused_model(what: str, model: str, reason: str) -> str:
    """The warning for a ``model`` or ``models`` entry left out of the options."""
    return (
        f"Cadenza ignored {what} {model[:120]!r}: {reason}, and editors pass a "
        "workspace's own settings in them. Set it in your own cadenza.toml or CADENZA_MODEL, "
        "or trust this folder (`cadenza trust FOLDER`)"
    )


def model_kept(
    options: dict[str, Any], config: CadenzaConfig, warnings: list[str]
) -> dict[str, Any]:
    """``options`` without a ``model`` or ``models`` entry that loads a file or switches provider.

    Editors send the model their picker shows, a catalogue name such as
    ``local/qwen2.5-coder-1.5b``: that stays. A path (``local/evil.gguf``,
    ``local//abs/x.gguf``) would make llama-server load a file of the repository, another
    provider would send the work elsewhere, and a name with spaces or brackets would pass for
    a picker's label (``x (local, default)``); each counts only repeating the person's own
    ``model`` or ``models`` (their ``cadenza.toml``, ``CADENZA_MODEL``). ``models`` is what
    the pickers offer, and picking one makes it the session's model: the same rule, entry by
    entry (the pickers' labels are Cadenza's own, ``host.catalog``).
    """
    kept = dict(options)
    model = kept.get("model")
    if isinstance(model, str) and (reason := _model_refusal(model, config)) is not None:
        warnings.append(_refused_model(f"{SOURCE}.model =", model, reason))
        del kept["model"]
    models = kept.get("models")
    if isinstance(models, list):  # else invalid: validation says so
        entries: list[Any] = []
        for entry in models:
            reason = _model_refusal(entry, config) if isinstance(entry, str) else None
            if reason is None:
                entries.append(entry)
            else:
                warnings.append(_refused_model(f"the {SOURCE}.models entry", entry, reason))
        kept["models"] = entries
    return kept


def held_kept(
    options: dict[str, Any], config: CadenzaConfig, warnings: list[str], *, trusted: bool
) -> dict[str, Any]:
    """``options`` without the held settings (``HELD_OPTIONS``, ``model_kept``) unless trusted.

    A held setting that repeats what ``config`` already has changes nothing and stays.

    Args:
        options: ``initializationOptions`` (known keys only).
        config: The person's configuration (their files, the environment).
        warnings: Receives one sentence naming the settings left out.
        trusted: The person trusts the workspace folder (``host.trust``).
    """
    if trusted:
        return options
    options = model_kept(options, config, warnings)
    refused: list[str] = []
    for section, key in HELD_OPTIONS:
        table = options.get(section)
        if table is None or (key is not None and (not isinstance(table, dict) or key not in table)):
            continue
        if _changes(config, _probe(options, config, section, key), section, key):
            refused.append(f"{section}.{key}" if key else section)
            options = _without_held(options, config, section, key)
    if refused:
        warnings.append(
            f"Cadenza ignored {SOURCE} {', '.join(refused)}: they choose where requests go or "
            "programs Cadenza runs, and editors pass a workspace's own settings in them. Set "
            "them in your own cadenza.toml, or trust this folder (`cadenza trust FOLDER`)"
        )
    return options


def tightened(
    options: dict[str, Any], config: CadenzaConfig, warnings: list[str]
) -> dict[str, Any]:
    """``options`` with every value that would widen ``config``'s permissions left out.

    Args:
        options: ``initializationOptions`` (known keys only).
        config: The configuration they apply to (the person's files and the environment).
        warnings: Receives a sentence for each value left out.
    """
    options = _without_rules(options, warnings)
    options = _gated_kept(options, config, warnings)
    options = _mcp_gated_kept(options, config, warnings)
    return _review_kept(options, config, warnings)


def load_server_config(
    root: Path | None, options: Any, *, store: TrustStore | None = None, granted: bool = False
) -> LoadedConfig:
    """Load ``cadenza.toml`` and the environment for ``root``, then apply ``options``.

    Args:
        root: The workspace folder of ``initialize`` (its ``cadenza.toml`` is read), or None.
        options: ``InitializeParams.initializationOptions`` as received: a JSON object with
            ``CadenzaConfig`` fields (camelCase or snake_case), or null. Values that would
            widen permissions are left out (``tightened``).
        store: The recorded trust decisions (default: the user's).
        granted: Trust the folder whatever was recorded (the person said so: they just
            answered, or started the server with ``--trust-workspace FOLDER``).

    Returns:
        The configuration; ``warnings`` says what was ignored and why.
    """
    warnings: list[str] = []
    options = _without_trust(options, warnings)
    trust = folder_trust(root, granted=granted, store=store) if root is not None else None
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
    options = held_kept(options, config, warnings, trusted=trust is not None and trust.trusted)
    options = tightened(options, config, warnings)
    try:
        config = config.merged(options, SOURCE)
    except ConfigError as exc:
        warnings.append(f"Cadenza ignored invalid settings, using defaults: {exc}")
    return LoadedConfig(config=config, warnings=warnings, trust=trust)
