"""Whether a session offers the code-intelligence tools, and what its prompt says of them.

The tools join a session's registry only when a language server can answer them for some file
of its workspace: the editor's (``ToolHost.code_intel()``) or one Cadenza starts itself. When
none can, they are not offered and the system prompt does not mention them.
"""

from __future__ import annotations

from pathlib import Path

from cadenza.engine.variants import LoopSettings
from cadenza.tools.host import ToolHost
from cadenza.tools.intel import CodeIntel
from cadenza.tools.intel_source import serves_workspace
from cadenza.tools.registry import ToolRegistry, intel_tools

INTEL_NOTES = {
    "rename_symbol": "rename_symbol renames a function, class or variable in every file",
    "find_references": "find_references lists the places that use a symbol",
    "go_to_definition": "go_to_definition shows where it is defined",
    "diagnostics": "diagnostics lists the errors language servers see",
}


def offer_intel(
    root: Path, host: ToolHost, intel: CodeIntel | None, tools: ToolRegistry
) -> ToolRegistry:
    """``tools`` plus the code-intelligence tools when some source serves ``root``."""
    candidates = [s for s in (host.code_intel(), intel) if s is not None]
    if any(name in tools.names for name in INTEL_NOTES) or not serves_workspace(root, candidates):
        return tools
    return tools.with_tools(intel_tools())


def intel_rule(loop: LoopSettings, tools: ToolRegistry) -> str:
    """The system prompt's line on the code-intelligence tools the session offers ("": none)."""
    offered = [n for n in tools.names if n in INTEL_NOTES and loop.offers(n)]
    if not offered:
        return ""
    notes = "; ".join(INTEL_NOTES[n] for n in offered)
    return (
        f"Code intelligence: {notes}. Each takes a file, the 1-based line where the symbol "
        "is written and its name."
    )
