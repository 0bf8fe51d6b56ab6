"""MCP servers as session tools: naming, the client connections (docs/mcp.md).

The servers' settings live with the configuration (``cadenza.config.mcp``); the SDK (``mcp``)
is imported by ``cadenza.mcp.client`` and ``cadenza.mcp.tools`` when a session has MCP servers.
"""
