"""The ACP SDK's ``initialize`` params as a JSON Schema: checked before the SDK is imported.

``acp.early`` answers ``initialize`` before the SDK loads, so it must know without the SDK
whether the SDK would accept the params (a malformed request still gets the SDK's error).
``initialize.schema.json`` beside this module is generated from the SDK itself
(``InitializeRequest.model_json_schema``), never written by hand: ``python -m
cadenza.acp.initialize_schema`` writes it again, and a test fails when the committed file
differs from what the installed SDK generates (an upgrade changed it). See ``early_schema``.

The schema is the SDK's, with two changes that keep it no wider than the SDK: the SDK's models
also take each field by its Python name (``populate_by_name``), so those names are checked
too, and words for people (``title``, ``description``) and ``default`` are dropped.
Whatever it accepts, the SDK accepts: a property test holds it to that.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cadenza.early_schema import dumps, load_validator

SCHEMA_FILE = Path(__file__).with_name("initialize.schema.json")
_DROPPED = ("title", "description", "default")


def _plain(schema: Any) -> Any:
    """``schema`` without the keywords in ``_DROPPED`` (property names are kept)."""
    if isinstance(schema, list):
        return [_plain(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key in ("properties", "$defs"):
            out[key] = {name: _plain(sub) for name, sub in value.items()}
        else:
            out[key] = _plain(value)
    return out


def _with_python_names(by_alias: dict[str, Any], by_name: dict[str, Any]) -> dict[str, Any]:
    """Each model's properties under both spellings the SDK takes (alias first)."""
    models = [(by_alias, by_name)]
    models += [(by_alias["$defs"][n], by_name["$defs"][n]) for n in by_alias.get("$defs", {})]
    for alias_model, name_model in models:
        if "properties" in alias_model:
            alias_model["properties"] = {
                **name_model["properties"],
                **alias_model["properties"],
            }
    return by_alias


def generate() -> dict[str, Any]:
    """The schema of ``initialize`` params from the installed SDK."""
    from acp.schema import InitializeRequest

    by_alias = InitializeRequest.model_json_schema(by_alias=True, mode="validation")
    by_name = InitializeRequest.model_json_schema(by_alias=False, mode="validation")
    return dict(_plain(_with_python_names(by_alias, by_name)))


def accepts_params() -> Callable[[Any], bool]:
    """Whether ``initialize`` params pass the committed schema (no SDK import)."""
    return load_validator(SCHEMA_FILE)


if __name__ == "__main__":
    SCHEMA_FILE.write_text(dumps(generate()), "utf-8")
