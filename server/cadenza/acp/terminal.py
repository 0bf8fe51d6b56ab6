"""``run_command`` in the client's terminal (``terminal/*``) when the client declares it.

An ACP session's tools are the usual ones with ``run_command`` replaced by
``ClientRunCommand``: the same name, arguments, description and permission gating. When the
client declared ``clientCapabilities.terminal``, a call:

1. ``terminal/create`` with ``command`` the shell (``bash``, else ``/bin/sh``), ``args``
   ``["-c", <command>]``, ``cwd`` the absolute folder (resolved inside the workspace as
   today) and ``outputByteLimit`` the tool's output bound;
2. embeds the terminal in the tool call (``tool_call_update`` with content
   ``{type: "terminal", terminalId}``; it stays in the call's content when it finishes, so the
   client keeps showing it);
3. ``terminal/wait_for_exit``, bounded by the call's ``timeout_s``: when late,
   ``terminal/kill``;
4. ``terminal/output``: the model reads the status line (``exit code N``, ``the command was
   killed by signal NAME``, or ``timed out after N s``) and the output (the client keeps the
   end of a longer output: a note says it was cut);
5. ``terminal/release`` always, also when the prompt is cancelled (then ``terminal/kill``
   first).

Without the capability the command runs in Cadenza's process, as ``RunCommand`` does.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

import anyio
from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)
from anyio import to_thread
from pydantic import ValidationError
from typing_extensions import override

from cadenza.acp.editor import AcpEditor
from cadenza.acp.reads import ClientReadFile
from cadenza.gitcmd import command_environment, is_git_override
from cadenza.tools.base import ToolContext, ToolError, ToolResult
from cadenza.tools.paths import relative_name, resolve_in_workspace
from cadenza.tools.registry import AnyTool, ToolRegistry
from cadenza.tools.shell import RunCommand, RunCommandArgs

log = logging.getLogger(__name__)

CLEANUP_S = 5.0
"""How long ``terminal/kill`` and ``terminal/release`` may take after a cancel or a timeout."""


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


def exit_line(exit_code: int | None, signal: str | None) -> str:
    """The status line the model reads first."""
    if exit_code is not None:
        return f"exit code {exit_code}"
    if signal:
        return f"the command was killed by signal {signal}"
    return "the command ended without an exit status"


class ClientRunCommand(RunCommand):
    """``run_command`` through the client's ``terminal/*`` (see the module docstring)."""

    def __init__(self, client: TerminalClient, editor: AcpEditor) -> None:
        super().__init__()
        self._client = client
        self._editor = editor

    @override
    async def invoke(self, args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
        if not self._editor.fs.terminal:
            return await super().invoke(args, ctx)
        cwd = resolve_in_workspace(ctx.root, args.cwd or ".")
        if not cwd.is_dir():
            what = "is not a folder" if cwd.exists() else "does not exist"
            raise ToolError(f"cwd {relative_name(ctx.root, cwd)} {what}")
        if "\x00" in args.command:
            raise ToolError("the command must not contain NUL characters")
        timeout_s = args.timeout_s if args.timeout_s is not None else self.default_timeout_s
        session_id = self._editor.session_id
        limit_s = self._editor.fs_timeout_s
        env = None
        if not ctx.trusted_folder:  # the git overrides only: the terminal keeps the client's
            whole = await to_thread.run_sync(command_environment, cwd)
            env = [EnvVariable(name=k, value=v) for k, v in whole.items() if is_git_override(k)]
        try:
            async with asyncio.timeout(limit_s):
                created = await self._client.create_terminal(
                    session_id=session_id,
                    command=self.shell,
                    args=["-c", args.command],
                    env=env,
                    cwd=str(cwd),
                    output_byte_limit=self.max_output_bytes,
                )
        except (RequestError, ValidationError, TimeoutError) as exc:
            raise ToolError(
                f"the editor could not start the command: {str(exc) or 'no answer in time'}"
            ) from None
        terminal_id = created.terminal_id
        call_id = self._editor.claim_command(args.command)
        if call_id is not None:
            self._editor.show_terminal(call_id, terminal_id)
        try:
            return await self._supervise_terminal(terminal_id, timeout_s, limit_s)
        except (RequestError, ValidationError) as exc:
            await self._cleanup(terminal_id, kill=True)
            raise ToolError(f"the editor's terminal failed: {exc}") from None
        except BaseException:  # cancelled: the command must not outlive the call
            await self._cleanup(terminal_id, kill=True)
            raise

    async def _supervise_terminal(
        self, terminal_id: str, timeout_s: float, limit_s: float
    ) -> ToolResult:
        session_id = self._editor.session_id
        timed_out = False
        try:
            async with asyncio.timeout(timeout_s):
                status = await self._client.wait_for_terminal_exit(
                    session_id=session_id, terminal_id=terminal_id
                )
        except TimeoutError:
            timed_out = True
            async with asyncio.timeout(limit_s):
                await self._client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
        async with asyncio.timeout(limit_s):
            output = await self._client.terminal_output(
                session_id=session_id, terminal_id=terminal_id
            )
        await self._cleanup(terminal_id, kill=False)
        text = output.output or "(no output)"
        if output.truncated:
            text = f"[the beginning of the output was cut by the editor]\n{text}"
        if timed_out:
            return ToolResult(
                content=(
                    f"timed out after {timeout_s:g} s; the command was killed. "
                    f"Output so far:\n{text}"
                ),
                is_error=True,
            )
        line = exit_line(status.exit_code, status.signal)
        return ToolResult(content=f"{line}\n{text}", is_error=status.exit_code != 0)

    async def _cleanup(self, terminal_id: str, *, kill: bool) -> None:
        """``terminal/kill`` (when asked) and ``terminal/release``, even in a cancelled call."""
        session_id = self._editor.session_id
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_S):
            try:
                if kill:
                    await self._client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
                await self._client.release_terminal(session_id=session_id, terminal_id=terminal_id)
            except Exception as exc:
                log.warning("session %s: terminal %s: %s", session_id, terminal_id, exc)


def client_tools(tools: ToolRegistry, client: TerminalClient, editor: AcpEditor) -> ToolRegistry:
    """``tools`` with ``run_command`` and ``read_file`` going through the client when it can.

    ``run_command`` becomes ``ClientRunCommand``, ``read_file`` ``reads.ClientReadFile`` (same
    places, names, arguments and gating).
    """
    replaced: list[AnyTool] = []
    for name in tools.names:
        tool = tools.get(name)
        assert tool is not None
        if name == "run_command":
            tool = ClientRunCommand(client, editor)
        elif name == "read_file":
            tool = ClientReadFile(editor)
        replaced.append(tool)
    return ToolRegistry(replaced)
