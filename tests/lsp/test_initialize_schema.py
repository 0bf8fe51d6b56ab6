"""The committed ``initialize`` schema is lsprotocol's, and it is never wider than pygls.

``lsp.early`` answers an ``initialize`` whose params pass the schema before pygls is loaded;
that is sound only while every params the schema accepts pygls structures too (its converter:
lsprotocol's hooks, attrs validators).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from cattrs.errors import BaseValidationError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.protocol import default_converter

from cadenza.early_schema import dumps
from cadenza.lsp.initialize_schema import SCHEMA_FILE, accepts_params, generate

accepts = accepts_params()
converter = default_converter()  # type: ignore[no-untyped-call]
SCHEMA = generate()


def _structures(params: Any) -> None:
    converter.structure(params, types.InitializeParams)


def _names() -> list[str]:
    """Every wire name in the schema, and every attrs field name (snake_case) behind them."""
    found = set(SCHEMA["properties"])
    for model in SCHEMA["$defs"].values():
        found |= set(model.get("properties", {}))
    for cls in vars(types).values():
        if isinstance(cls, type) and attrs.has(cls) and cls.__name__ in SCHEMA["$defs"]:
            found |= {field.name for field in attrs.fields(cls)}
    return sorted(found)


NAMES = _names()
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.sampled_from([0, 1, 2, 2**31 - 1, 2**31, -1]),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.sampled_from(["utf-8", "utf-16", "plaintext", "markdown", "file:///a", "quickfix", "off"]),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=4), inner, max_size=5),
    ),
    max_leaves=16,
)
plausible = st.recursive(
    st.none() | st.booleans() | st.sampled_from([1, 2, "utf-8", "plaintext", "full"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(NAMES), inner, max_size=5)
    ),
    max_leaves=14,
)
params = st.fixed_dictionaries(
    {"capabilities": st.dictionaries(st.sampled_from(NAMES), plausible | values, max_size=6)},
    optional={
        "processId": st.none() | st.integers(min_value=-2, max_value=2**32) | values,
        "rootUri": st.none() | st.just("file:///tmp/w") | values,
        "rootPath": st.none() | st.just("/tmp/w") | values,
        "clientInfo": st.dictionaries(st.sampled_from(["name", "version"]), plausible | values),
        "locale": values,
        "trace": st.sampled_from(["off", "messages", "verbose", "x"]) | values,
        "workDoneToken": values,
        "workspaceFolders": st.lists(
            st.dictionaries(st.sampled_from(["uri", "name"]), st.just("file:///tmp/w") | values)
        )
        | values,
        "initializationOptions": values,
    },
) | st.dictionaries(st.sampled_from(NAMES), values, max_size=6)


def test_the_committed_schema_is_the_installed_lsprotocols() -> None:
    # On failure after an lsprotocol upgrade: python -m cadenza.lsp.initialize_schema (review).
    assert SCHEMA_FILE.read_text("utf-8") == dumps(SCHEMA)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params)
def test_what_the_schema_accepts_pygls_accepts(value: dict[str, Any]) -> None:
    if accepts(value):
        _structures(value)


CLIENTS: list[dict[str, Any]] = [
    {"processId": None, "rootUri": None, "capabilities": {}},
    {
        "processId": 1234,
        "rootUri": "file:///tmp/w",
        "workspaceFolders": [{"uri": "file:///tmp/w", "name": "w"}],
        "clientInfo": {"name": "Neovim", "version": "0.11.0"},
        "trace": "off",
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
            "textDocument": {
                "synchronization": {
                    "didSave": True,
                    "willSave": True,
                    "dynamicRegistration": False,
                },
                "completion": {"completionItemKind": {"valueSet": [1, 2, 3, 25]}},
                "codeAction": {
                    "codeActionLiteralSupport": {
                        "codeActionKind": {"valueSet": ["", "quickfix", "source.x"]}
                    }
                },
                "semanticTokens": {
                    "requests": {"range": False, "full": {"delta": True}},
                    "tokenTypes": ["namespace"],
                    "tokenModifiers": [],
                    "formats": ["relative"],
                },
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "foldingRange": {"foldingRangeKind": {"valueSet": ["comment", "x"]}},
            },
            "window": {"workDoneProgress": True, "showMessage": {}},
            "workspace": {"applyEdit": True, "workspaceFolders": True, "configuration": True},
            "experimental": {"anything": [1, {"x": None}]},
        },
        "initializationOptions": {"model": "openai/x"},
    },
]


@pytest.mark.parametrize("value", CLIENTS)
def test_real_clients_pass_the_schema(value: dict[str, Any]) -> None:
    assert accepts(value)
    _structures(value)


MALFORMED: list[dict[str, Any]] = [
    {},
    {"capabilities": 5},
    {"capabilities": {"general": {"positionEncodings": 5}}},
    {"capabilities": {}, "processId": "x"},
    {"capabilities": {}, "workspaceFolders": [{"uri": "file:///w"}]},
]


@pytest.mark.parametrize("value", MALFORMED)
def test_the_schema_refuses_what_pygls_refuses(value: dict[str, Any]) -> None:
    assert not accepts(value)
    with pytest.raises((BaseValidationError, TypeError, ValueError)):
        _structures(value)
