"""The MCP servers of one session: each connection in its own long-lived task.

The SDK's transports and ``ClientSession`` are anyio context managers: they must be entered
and left in one task. So each server gets a task (``McpConnection._serve``) that connects,
initializes, lists the tools, then waits until the session closes it; tool calls from the
session's task go through the connected ``ClientSession``. ``McpServers`` is the session's
resource (``SessionResources``): closing the session closes every connection (a stdio
server's stdin is closed, then its whole process group is stopped: ``mcp.stdio``).

A server that cannot start, or does not list its tools within ``startup_timeout_s``, is left
out with a warning: the session goes on without its tools.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from cadenza import __version__
from cadenza.config.mcp import McpConfig, McpServerConfig
from cadenza.mcp.naming import tool_name
from cadenza.mcp.stdio import stdio_server
from cadenza.mcp.tools import McpTool
from cadenza.tools.base import ToolError

log = logging.getLogger(__name__)

CLOSE_S = 4.0
"""Seconds a connection has to close on its own before its task is cancelled."""

Warn = Callable[[str], None]


def describe(exc: BaseException) -> str:
    """A one-line reason, from the first leaf of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class McpConnection:
    """One MCP server of one session.

    Args:
        server: Its settings.
        root: The session's workspace root (a stdio server's default working folder).
    """

    def __init__(self, server: McpServerConfig, root: Path) -> None:
        self.server = server
        self.root = root
        self.session: ClientSession | None = None
        self.tools: list[mcp_types.Tool] = []
        self.failure: BaseException | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, timeout_s: float) -> list[mcp_types.Tool]:
        """Start the connection task; its tools once it listed them.

        Raises:
            ToolError: It failed to start or did not answer within ``timeout_s`` (closed).
        """
        self._task = asyncio.create_task(self._serve(), name=f"cadenza-mcp-{self.server.name}")
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except TimeoutError:
            await self.aclose()
            raise ToolError(f"it did not list its tools within {timeout_s:g} s") from None
        except BaseException:
            await asyncio.shield(self.aclose())
            raise
        if self.session is None:
            await self.aclose()
            reason = describe(self.failure) if self.failure else "it stopped"
            raise ToolError(reason)
        return self.tools

    async def _open(self, stack: AsyncExitStack) -> TransportStreams:
        """Enter the server's transport on ``stack``: its read and write streams."""
        server = self.server
        if server.command is not None:
            params = StdioServerParameters(
                command=server.command,
                args=server.args,
                env=server.env or None,
                cwd=self.root / Path(server.cwd).expanduser() if server.cwd else self.root,
            )
            return await stack.enter_async_context(stdio_server(params))
        assert server.url is not None
        client = create_mcp_http_client(headers=server.headers or None)
        await stack.enter_async_context(client)
        return await stack.enter_async_context(
            streamable_http_client(server.url, http_client=client)
        )

    async def _serve(self) -> None:
        """Connect, list the tools, wait for ``aclose``; all in this one task."""
        try:
            async with AsyncExitStack() as stack:
                read, write = await self._open(stack)
                info = mcp_types.Implementation(name="cadenza", version=__version__)
                session = await stack.enter_async_context(
                    ClientSession(read, write, client_info=info)
                )
                await session.initialize()
                self.tools = await self._list_tools(session)
                self.session = session
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:
            self.failure = exc
            if self._ready.is_set():
                log.warning("MCP server %s stopped: %s", self.server.name, describe(exc))
            else:
                log.info("MCP server %s failed to start", self.server.name, exc_info=exc)
        finally:
            self.session = None
            self._ready.set()

    @staticmethod
    async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # pages; a server that never stops paging is cut off
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call ``tool`` on the server.

        Raises:
            ToolError: Not connected any more, or the server answered with an MCP error.
        """
        session = self.session
        if session is None:
            reason = f": {describe(self.failure)}" if self.failure else ""
            raise ToolError(f"MCP server {self.server.name!r} is not connected{reason}")
        try:
            return await session.call_tool(tool, arguments)
        except MCPError as exc:
            raise ToolError(f"MCP server {self.server.name!r}: {exc}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            raise ToolError(
                f"MCP server {self.server.name!r} is not connected: {describe(exc)}"
            ) from None

    async def aclose(self) -> None:
        """Stop the connection task (and a stdio server's process); idempotent."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self.session is None:
            task.cancel()  # still starting (e.g. no answer to initialize): nothing to finish
        await asyncio.wait({task}, timeout=CLOSE_S)
        if not task.done():
            log.warning("MCP server %s: closing took too long, cancelling", self.server.name)
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_S)


class McpServers:
    """The session resource holding its MCP connections (``SessionResources``).

    A resource kept beyond one engine session (a face may keep a session's resources from one
    turn to the next) is connected by each: a server starts once (one whose start was
    cancelled is started again by the next), and its tools are offered to every engine session
    that connects it.
    """

    def __init__(self) -> None:
        self.connections: list[McpConnection] = []
        self.tools: list[McpTool] = []
        """The tools of the servers that started, in order."""

    async def connect(
        self,
        servers: Sequence[McpServerConfig],
        *,
        root: Path,
        config: McpConfig,
        taken: set[str],
        warn: Warn,
    ) -> list[McpTool]:
        """Start those of ``servers`` not started yet, at once; the tools of all that started.

        Args:
            servers: The servers.
            root: The workspace root.
            config: Timeouts and gating defaults.
            taken: Tool names the session has already (an MCP tool never replaces one).
            warn: Told about each server that is left out, and each tool that is.
        """
        tried = {connection.server.name for connection in self.connections}
        connections = [McpConnection(s, root) for s in servers if s.name not in tried]
        self.connections.extend(connections)
        try:
            results = await asyncio.gather(
                *(c.start(config.startup_timeout_s) for c in connections), return_exceptions=True
            )
        except BaseException:
            # Cancelled while they started (each closed itself): not a failure of theirs, so
            # a later connect starts them again.
            self.connections = [c for c in self.connections if c not in connections]
            raise
        names = set(taken) | {tool.name for tool in self.tools}
        for connection, result in zip(connections, results, strict=True):
            server = connection.server
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                reason = str(result) if isinstance(result, ToolError) else describe(result)
                warn(f"MCP server {server.name!r} did not start, going on without it: {reason}")
                continue
            gated = config.gated if server.gated is None else server.gated
            timeout_s = server.timeout_s or config.timeout_s
            for remote in result:
                name = tool_name(server.name, remote.name)
                if name in names:
                    warn(
                        f"MCP server {server.name!r}: tool {remote.name!r} left out (its name "
                        f"{name} is taken)"
                    )
                    continue
                names.add(name)
                self.tools.append(
                    McpTool.build(connection, remote, name=name, timeout_s=timeout_s, gated=gated)
                )
            log.info("MCP server %s: %d tool(s)", server.name, len(result))
        return [tool for tool in self.tools if tool.name not in taken]

    async def aclose(self) -> None:
        """Close every connection (at the same time)."""
        connections, self.connections = self.connections, []
        self.tools = []
        await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)
