"""The client's terminal over ACP (``terminal/*``), for ``run_command`` in the editor.

When the client declared ``clientCapabilities.terminal``, a session's ``run_command`` runs
there (``host.client_tools.ClientRunCommand``: what is run, waited for, killed and released,
and what the model reads). This module carries it over the wire: each step is one request
(``terminal/create``, ``terminal/wait_for_exit``, ``terminal/output``, ``terminal/kill``,
``terminal/release``), an error answer or a malformed result becomes ``TerminalFailed``, and
the terminal is embedded in the tool call that runs the command (``tool_call_update`` with
content ``{type: "terminal", terminalId}``; it stays in the call's content when it finishes,
so the client keeps showing it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)
from pydantic import ValidationError

from cadenza.acp.editor import AcpEditor
from cadenza.host.client_tools import TerminalExit, TerminalFailed, TerminalOutput


class TerminalClient(Protocol):
    """The ``terminal/*`` requests (the SDK's ``AgentSideConnection``)."""

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> CreateTerminalResponse:
        """``terminal/create``."""
        ...

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        """``terminal/output``."""
        ...

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str
    ) -> WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``."""
        ...

    async def kill_terminal(self, session_id: str, terminal_id: str) -> KillTerminalResponse | None:
        """``terminal/kill``."""
        ...

    async def release_terminal(
        self, session_id: str, terminal_id: str
    ) -> ReleaseTerminalResponse | None:
        """``terminal/release``."""
        ...


@asynccontextmanager
async def _failed() -> AsyncIterator[None]:
    """An error answer or a malformed result: ``TerminalFailed`` with its message."""
    try:
        yield
    except (RequestError, ValidationError) as exc:
        raise TerminalFailed(str(exc)) from None


class AcpTerminal:
    """One session's terminal in the client (``host.client_tools.ClientTerminal``)."""

    def __init__(self, client: TerminalClient, editor: AcpEditor) -> None:
        self._client = client
        self._editor = editor

    @property
    def available(self) -> bool:
        """The client declared ``terminal`` in ``initialize``."""
        return self._editor.fs.terminal

    @property
    def timeout_s(self) -> float:
        """The bound on each request (the client file-system timeout)."""
        return self._editor.fs_timeout_s

    @property
    def session_id(self) -> str:
        """The ACP session id."""
        return self._editor.session_id

    async def create(
        self, command: str, args: list[str], cwd: str, output_byte_limit: int, env: dict[str, str]
    ) -> str:
        """``terminal/create``; the terminal's id."""
        async with _failed():
            created = await self._client.create_terminal(
                session_id=self.session_id,
                command=command,
                args=args,
                env=[EnvVariable(name=k, value=v) for k, v in env.items()] or None,
                cwd=cwd,
                output_byte_limit=output_byte_limit,
            )
        return created.terminal_id

    def show(self, command: str, terminal_id: str) -> None:
        """Embed the terminal in the open ``run_command`` call running ``command``, if any."""
        call_id = self._editor.claim_command(command)
        if call_id is not None:
            self._editor.show_terminal(call_id, terminal_id)

    async def wait_for_exit(self, terminal_id: str) -> TerminalExit:
        """``terminal/wait_for_exit``."""
        async with _failed():
            status = await self._client.wait_for_terminal_exit(
                session_id=self.session_id, terminal_id=terminal_id
            )
        return TerminalExit(exit_code=status.exit_code, signal=status.signal)

    async def output(self, terminal_id: str) -> TerminalOutput:
        """``terminal/output``."""
        async with _failed():
            output = await self._client.terminal_output(
                session_id=self.session_id, terminal_id=terminal_id
            )
        return TerminalOutput(text=output.output, truncated=output.truncated)

    async def kill(self, terminal_id: str) -> None:
        """``terminal/kill``."""
        async with _failed():
            await self._client.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)

    async def release(self, terminal_id: str) -> None:
        """``terminal/release``."""
        async with _failed():
            await self._client.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
