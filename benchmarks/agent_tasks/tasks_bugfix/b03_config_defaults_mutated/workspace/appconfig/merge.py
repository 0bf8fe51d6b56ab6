"""Layering of settings: each layer overrides the ones before it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def layered(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """One dict of all ``layers``, a later layer winning over an earlier one.

    Tables (nested mappings) present in two layers are merged key by key, so a file that
    sets ``[server] port`` keeps the default ``host``. The layers themselves are left as
    they were: the defaults are a layer too, and they are reused for every load.
    """
    if not layers:
        return {}
    result = layers[0]
    for layer in layers[1:]:
        for key, value in layer.items():
            current = result.get(key)
            if isinstance(value, Mapping) and isinstance(current, Mapping):
                result[key] = layered(current, value)
            else:
                result[key] = value
    return result


def flatten(settings: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``settings`` with tables spelled out as dotted keys (``{"server.port": 8000}``), for
    ``app --show-config`` and for comparing two configurations line by line."""
    flat: dict[str, Any] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, prefix=f"{name}."))
        else:
            flat[name] = value
    return flat
