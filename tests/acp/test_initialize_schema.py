"""The committed ``initialize`` schema is the SDK's, and it is never wider than the SDK.

``acp.early`` answers an ``initialize`` whose params pass the schema before the SDK is
loaded; that is sound only while every params the schema accepts the SDK accepts too.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp.schema import InitializeRequest, InitializeResponse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cadenza.acp.agent import CadenzaAgent
from cadenza.acp.early import initialize_result
from cadenza.acp.initialize_schema import SCHEMA_FILE, accepts_params, generate
from cadenza.early_schema import dumps

accepts = accepts_params()


def _agent_answers(params: dict[str, Any]) -> None:
    """The SDK's path: its validation, then the agent's ``initialize`` (never salvaged)."""
    request = InitializeRequest.model_validate(params)
    agent = CadenzaAgent()
    response = asyncio.run(
        agent.initialize(request.protocol_version, request.client_capabilities, request.client_info)
    )
    assert response == InitializeResponse.model_validate(
        initialize_result(request.protocol_version)
    )


def _names(schema: Any) -> set[str]:
    """Every property name in ``schema``: the keys a mutated request is made of."""
    if isinstance(schema, list):
        return set().union(*map(_names, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema.get("properties", {}))
    return found.union(*map(_names, schema.values()))


NAMES = sorted(_names(generate()))
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=4), inner, max_size=4),
    ),
    max_leaves=12,
)
plausible = st.recursive(
    st.none() | st.booleans() | st.text(max_size=4),
    lambda inner: st.dictionaries(st.sampled_from(NAMES), inner, max_size=4),
    max_leaves=10,
)
objects = st.dictionaries(st.sampled_from(NAMES), plausible | values, max_size=5)
optional_fields = {
    "clientCapabilities": objects | values,
    "client_capabilities": objects,
    "clientInfo": st.dictionaries(st.sampled_from(NAMES), plausible, max_size=4) | values,
    "_meta": values,
    "field_meta": values,
}
params = st.fixed_dictionaries(
    {"protocolVersion": st.integers(min_value=0, max_value=3)}, optional=optional_fields
) | st.fixed_dictionaries(
    {},
    optional={
        "protocolVersion": st.integers(min_value=-2, max_value=70000) | values,
        "protocol_version": st.integers(min_value=0, max_value=3) | values,
        **optional_fields,
    },
)


def test_the_committed_schema_is_the_installed_sdks() -> None:
    # On failure after an SDK upgrade: python -m cadenza.acp.initialize_schema (and review).
    assert SCHEMA_FILE.read_text("utf-8") == dumps(generate())


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params)
def test_what_the_schema_accepts_the_sdk_accepts(value: dict[str, Any]) -> None:
    if accepts(value):
        _agent_answers(value)


CLIENTS: list[dict[str, Any]] = [
    {"protocolVersion": 1},
    {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True}},
    {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True, "_meta": {"x": 1}},
            "terminal": True,
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
        "clientInfo": {"name": "zed", "title": "Zed", "version": "0.200.0"},
    },
]


@pytest.mark.parametrize("value", CLIENTS)
def test_real_clients_pass_the_schema(value: dict[str, Any]) -> None:
    assert accepts(value)
    _agent_answers(value)


MALFORMED: list[dict[str, Any]] = [
    {},
    {"protocolVersion": -1},
    {"protocolVersion": 70000},
    {"protocolVersion": 1, "clientCapabilities": {"fs": 5}},
    {"protocolVersion": 1, "clientCapabilities": {"fs": {"read_text_file": "x"}}},
    {"protocolVersion": 1, "clientCapabilities": {"terminal": [1]}},
    {"protocolVersion": 1, "clientInfo": {"version": "1"}},
]


@pytest.mark.parametrize("value", MALFORMED)
def test_the_schema_refuses_malformed_params(value: dict[str, Any]) -> None:
    # The SDK salvages some of these into defaults; what it answers is left to it.
    assert not accepts(value)
