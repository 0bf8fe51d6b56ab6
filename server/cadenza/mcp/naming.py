"""Tool names of MCP tools: ``mcp__<server>__<tool>``, ``[A-Za-z0-9_-]``, at most 64 chars.

Model APIs accept only such names (OpenAI: ``^[a-zA-Z0-9_-]{1,64}$``). A name that is too
long keeps its start and ends with a short hash of the full name, so it stays unique.
"""

from __future__ import annotations

from hashlib import sha256

from cadenza.config.mcp import sanitize

PREFIX = "mcp__"
MAX_NAME = 64


def tool_name(server: str, tool: str) -> str:
    """The session's name for ``tool`` of ``server``."""
    full = f"{PREFIX}{sanitize(server)}__{sanitize(tool)}"
    if len(full) <= MAX_NAME:
        return full
    digest = sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{full[: MAX_NAME - 9]}_{digest}"
