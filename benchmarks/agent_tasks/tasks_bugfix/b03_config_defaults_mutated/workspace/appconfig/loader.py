"""Load the app's settings: defaults, then a TOML file, then the environment."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import Any

from appconfig.merge import flatten, layered

DEFAULTS: dict[str, Any] = {
    "log_level": "info",
    "workers": 2,
    "server": {"host": "127.0.0.1", "port": 8000},
}
"""What the app runs with when neither the file nor the environment says otherwise."""

ENV_PREFIX = "APP_"


def from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings named by ``APP_*`` variables: ``APP_LOG_LEVEL``, ``APP_WORKERS``,
    ``APP_SERVER_HOST`` and ``APP_SERVER_PORT``.

    Raises:
        ValueError: A number that does not parse.
    """
    found: dict[str, Any] = {}
    if f"{ENV_PREFIX}LOG_LEVEL" in environ:
        found["log_level"] = environ[f"{ENV_PREFIX}LOG_LEVEL"].lower()
    if f"{ENV_PREFIX}WORKERS" in environ:
        found["workers"] = int(environ[f"{ENV_PREFIX}WORKERS"])
    server: dict[str, Any] = {}
    if f"{ENV_PREFIX}SERVER_HOST" in environ:
        server["host"] = environ[f"{ENV_PREFIX}SERVER_HOST"]
    if f"{ENV_PREFIX}SERVER_PORT" in environ:
        server["port"] = int(environ[f"{ENV_PREFIX}SERVER_PORT"])
    if server:
        found["server"] = server
    return found


def load(text: str = "", environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings from the TOML ``text`` (empty: no file) and ``environ``.

    Raises:
        tomllib.TOMLDecodeError: The file is not valid TOML.
        ValueError: An environment variable holds a number that does not parse.
    """
    from_file = tomllib.loads(text)
    workers = from_file.get("workers", DEFAULTS["workers"])
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive whole number, got {workers!r}")
    return layered(DEFAULTS, from_file, from_env(environ or {}))


def describe(settings: Mapping[str, Any]) -> str:
    """The settings as ``app --show-config`` prints them: ``key = value`` lines, sorted."""
    return "\n".join(f"{key} = {value!r}" for key, value in sorted(flatten(settings).items()))
