"""A session's MCP servers: which ones, and attaching their tools to the session.

The servers come from the configuration (``[mcp]``), and over ACP also from the client's
``mcpServers`` (a name already configured is skipped). Attaching connects them all at once
(``mcp.client.McpServers``, a session resource closed with the session's resources); the
tools of those that started join the session's, gated as configured. Resources kept from one
turn to the next (``host.service.FaceParts.resources``) keep their servers: each starts once.
A server that fails is a warning: the session goes on without its tools. The MCP SDK is
imported only when a session has servers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from cadenza.config.mcp import McpConfig, McpServerConfig
from cadenza.engine.session import Session

T = TypeVar("T")
Warn = Callable[[str], None]


def merge_servers(
    configured: Sequence[McpServerConfig], extra: Sequence[McpServerConfig], warn: Warn
) -> list[McpServerConfig]:
    """The configured servers, then the ``extra`` ones whose names are not taken yet."""
    servers = list(configured)
    taken = {server.name for server in servers}
    for server in extra:
        if server.name in taken:
            warn(f"MCP server {server.name!r} is configured already; ignoring it")
            continue
        taken.add(server.name)
        servers.append(server)
    return servers


async def attach_mcp(
    session: Session, config: McpConfig, servers: Sequence[McpServerConfig], warn: Warn
) -> list[str]:
    """Connect ``servers`` for ``session``: their tools join its tool list (gated as set).

    Failures are warnings; only cancellation raises. Returns the names of the added tools.
    """
    if not servers:
        return []
    from cadenza.mcp.client import McpServers  # the MCP SDK loads only when used

    resource = session.resources.get(McpServers, McpServers)
    tools = await resource.connect(
        servers, root=session.root, config=config, taken=set(session.tool_names), warn=warn
    )
    if tools:
        session.add_tools(tools, gated=[tool.name for tool in tools if tool.gated])
    return [tool.name for tool in tools]


async def connect_then(
    session: Session,
    config: McpConfig,
    servers: Sequence[McpServerConfig],
    warn: Warn,
    then: Coroutine[Any, Any, T],
) -> T:
    """Attach the MCP servers, then run ``then`` (the session's drive).

    Cancelled while connecting, ``then`` never runs: the session ends (``session_end``
    cancelled) and its resources close here.
    """
    try:
        await attach_mcp(session, config, servers, warn)
    except BaseException:
        then.close()
        session.end_before_start()
        await asyncio.shield(session.aclose())
        raise
    return await then
