"""When the code-intelligence tools are offered, and what the system prompt says of them."""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.intel_offer import intel_rule, offer_intel
from cadenza.engine.variants import API_LOOP, LOCAL_LOOP
from cadenza.tools.intel import IntelFeature
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor

TOOL_LOOP = LOCAL_LOOP.replace(edit="old_string", ending="complete")
"""The small-model profile speaking tool calls, as these scripted models do."""


class PythonOnly:
    def features(self, path: Path) -> frozenset[IntelFeature]:
        return frozenset({"references", "rename"}) if path.suffix == ".py" else frozenset()


def test_offered_only_where_a_source_serves_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("x\n")
    editor = MemoryEditor()
    none = offer_intel(tmp_path, editor, PythonOnly(), default_tools())  # type: ignore[arg-type]
    assert "rename_symbol" not in none.names and intel_rule(API_LOOP, none) == ""
    assert offer_intel(tmp_path, editor, None, default_tools()).names == default_tools().names
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    tools = offer_intel(tmp_path, editor, PythonOnly(), default_tools())  # type: ignore[arg-type]
    intel = ["find_references", "go_to_definition", "rename_symbol", "diagnostics"]
    assert tools.names[-4:] == intel
    assert API_LOOP.movement_tools(None, tools.names)[-4:] == intel
    assert [n for n in TOOL_LOOP.movement_tools(None, tools.names) if n in intel] == [
        "rename_symbol"
    ]
    assert intel_rule(TOOL_LOOP, tools).startswith(
        "Code intelligence: rename_symbol renames a function, class or variable in every file."
    )
    assert "find_references" in intel_rule(API_LOOP, tools)
    assert intel_rule(TOOL_LOOP.replace(intel_tools=()), tools) == ""
