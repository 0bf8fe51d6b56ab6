"""MCP servers as session tools: config, naming, the client connections (docs/mcp.md).

Only ``cadenza.mcp.config`` is imported by ``cadenza.config``; the SDK (``mcp``) is imported
by ``cadenza.mcp.client`` and ``cadenza.mcp.tools`` when a session has MCP servers.
"""
