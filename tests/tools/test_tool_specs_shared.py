"""Tool specs: each session has its own tools, but a schema is generated once per argument model."""

from __future__ import annotations

from typing import Any

import pytest

from cadenza.tools.base import strip_titles
from cadenza.tools.registry import default_tools


def test_a_later_sessions_tools_do_not_generate_their_schemas_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = default_tools()
    expected = {}
    for name in first.names:
        tool = first.get(name)
        assert tool is not None
        schema = strip_titles(tool.args_model.model_json_schema())
        schema.pop("description", None)
        expected[name] = schema
        assert tool.spec().parameters == schema

    def no_generation(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a schema was generated again")

    second = default_tools()
    for name in second.names:
        tool = second.get(name)
        assert tool is not None and tool is not first.get(name)
        monkeypatch.setattr(tool.args_model, "model_json_schema", no_generation)
    for name in second.names:
        tool = second.get(name)
        assert tool is not None
        spec = tool.spec()
        assert (spec.name, spec.description, spec.parameters) == (
            tool.name,
            tool.description,
            expected[name],
        )
