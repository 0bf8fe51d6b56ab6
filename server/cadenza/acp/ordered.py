"""A session's requests to the client, each sent after the updates queued before it.

``session/update`` notifications are queued and sent by a pump task (``stream``), while a
tool's requests (``fs/read_text_file``, ``fs/write_text_file``, ``terminal/*``,
``session/request_permission``, ``elicitation/create``) are awaited at once. Without care a
request made on behalf of a tool call could reach the client before the ``tool_call`` update
announcing that call. ``OrderedClient`` flushes the session's updates before every request,
so a client always learns of a call before any request made on its behalf.
"""

from __future__ import annotations

from typing import Protocol

from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    CreateTerminalResponse,
    DeclineElicitationResponse,
    ElicitationMode,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from cadenza.acp.editor import AcpClient
from cadenza.acp.human import ElicitationClient
from cadenza.acp.stream import UpdateSink, UpdateStream
from cadenza.acp.terminal import TerminalClient


class AcpConnection(AcpClient, ElicitationClient, TerminalClient, UpdateSink, Protocol):
    """What the agent uses of the SDK's ``AgentSideConnection``."""


class OrderedClient:
    """``conn`` for one session: each request waits for ``stream`` to be flushed first.

    Args:
        conn: The client connection.
        stream: The session's queued updates.
    """

    def __init__(self, conn: AcpConnection, stream: UpdateStream) -> None:
        self._conn = conn
        self._stream = stream

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """``session/request_permission``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )

    async def write_text_file(
        self, session_id: str, path: str, content: str
    ) -> WriteTextFileResponse | None:
        """``fs/write_text_file``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.write_text_file(session_id=session_id, path=path, content=content)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> ReadTextFileResponse:
        """``fs/read_text_file``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.read_text_file(
            session_id=session_id, path=path, line=line, limit=limit
        )

    async def create_elicitation(
        self, message: str, mode: ElicitationMode
    ) -> AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse:
        """``elicitation/create``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.create_elicitation(message=message, mode=mode)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> CreateTerminalResponse:
        """``terminal/create``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.create_terminal(
            session_id=session_id,
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            output_byte_limit=output_byte_limit,
        )

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        """``terminal/output``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.terminal_output(session_id=session_id, terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str
    ) -> WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal_id
        )

    async def kill_terminal(self, session_id: str, terminal_id: str) -> KillTerminalResponse | None:
        """``terminal/kill``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)

    async def release_terminal(
        self, session_id: str, terminal_id: str
    ) -> ReleaseTerminalResponse | None:
        """``terminal/release``, after the queued updates."""
        await self._stream.flush()
        return await self._conn.release_terminal(session_id=session_id, terminal_id=terminal_id)
