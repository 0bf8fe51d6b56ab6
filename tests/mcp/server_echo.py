"""A small MCP server for the tests (the SDK's ``MCPServer``, formerly ``FastMCP``).

``python server_echo.py`` serves over stdio; ``python server_echo.py http PORT`` serves
streamable HTTP on 127.0.0.1:PORT (path ``/mcp``). ``ECHO_PREFIX`` in the environment, when
set, prefixes ``shout``'s answer (so tests can see the configured env reached the server).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("echo")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return os.environ.get("ECHO_PREFIX", "") + text.upper()


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("the fail tool failed as asked")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"


class Box(BaseModel):
    """A rectangle."""

    width: float
    height: float


@server.tool()
def area(box: Box) -> float:
    """The area of a box (a nested object: the schema has $defs and a $ref)."""
    return box.width * box.height


@server.tool()
def crash() -> str:
    """The server process exits at once."""
    os._exit(3)


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
