"""``run_command`` and ``read_file`` through the person's editor, when its client can.

A client may run commands in its own terminal (ACP ``terminal/*``) and serve the editor's
text of a file, unsaved changes included (ACP ``fs/read_text_file``). A session of such a
client gets the usual tools with those two replaced (``client_tools``): the same names,
arguments, descriptions and permission gating, going through ports the face implements over
its wire (``ClientTerminal``, and a ``refresh`` of a file's text).

A command in the client's terminal:

1. is created with ``command`` the shell (``bash``, else ``/bin/sh``), ``args``
   ``["-c", <command>]``, ``cwd`` the absolute folder (resolved inside the workspace as for
   ``RunCommand``) and the tool's output bound;
2. is shown in its tool call (``ClientTerminal.show``: the client keeps showing the terminal);
3. is waited for, bounded by the call's ``timeout_s``: when late, it is killed;
4. has its output read: the model reads the status line (``exit code N``, ``the command was
   killed by signal NAME``, or ``timed out after N s``) and the output (the client keeps the
   end of a longer output: a note says it was cut);
5. is released always, also when the call is cancelled (then killed first).

Without a terminal the command runs in Cadenza's process, as ``RunCommand`` does; without
``refresh`` (or when the client cannot read the file) ``read_file`` reads the disk.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio
from anyio import to_thread
from typing_extensions import override

from cadenza.gitcmd import command_environment, is_git_override
from cadenza.tools.base import ToolContext, ToolError, ToolResult
from cadenza.tools.freshness import ReadStamp
from cadenza.tools.paths import resolve_in_workspace
from cadenza.tools.read import ReadFile, ReadFileArgs
from cadenza.tools.registry import AnyTool, ToolRegistry
from cadenza.tools.shell import RunCommand, RunCommandArgs

log = logging.getLogger(__name__)

CLEANUP_S = 5.0
"""How long killing and releasing a terminal may take after a cancel or a timeout."""


class TerminalFailed(Exception):
    """The client answered a terminal request with an error or a malformed result."""


@dataclass(frozen=True, kw_only=True)
class TerminalExit:
    """How a command in the client's terminal ended: its exit code, or the signal."""

    exit_code: int | None
    signal: str | None


@dataclass(frozen=True, kw_only=True)
class TerminalOutput:
    """What a terminal printed, and whether the client cut its beginning."""

    text: str
    truncated: bool


class ClientTerminal(Protocol):
    """A session's terminal in the client (ACP ``terminal/*``), as the face carries it.

    Each request raises ``TerminalFailed`` when the client answers it with an error.
    """

    @property
    def available(self) -> bool:
        """The client declared a terminal (else commands run in Cadenza's process)."""
        ...

    @property
    def timeout_s(self) -> float:
        """How long one request (create, kill, output) may take."""
        ...

    @property
    def session_id(self) -> str:
        """The session's id (in the log)."""
        ...

    async def create(
        self, command: str, args: list[str], cwd: str, output_byte_limit: int, env: dict[str, str]
    ) -> str:
        """Start ``command args`` in ``cwd`` with ``env`` added; the terminal's id."""
        ...

    def show(self, command: str, terminal_id: str) -> None:
        """Show the terminal in the tool call that runs ``command``."""
        ...

    async def wait_for_exit(self, terminal_id: str) -> TerminalExit:
        """Wait until the command ends."""
        ...

    async def output(self, terminal_id: str) -> TerminalOutput:
        """What the command printed (its end, when the client cut it)."""
        ...

    async def kill(self, terminal_id: str) -> None:
        """Kill the command (the terminal stays until released)."""
        ...

    async def release(self, terminal_id: str) -> None:
        """Release the terminal (killing its command if it still runs)."""
        ...


def exit_line(exit_code: int | None, signal: str | None) -> str:
    """The status line the model reads first."""
    if exit_code is not None:
        return f"exit code {exit_code}"
    if signal:
        return f"the command was killed by signal {signal}"
    return "the command ended without an exit status"


class ClientRunCommand(RunCommand):
    """``run_command`` through the client's terminal (see the module docstring)."""

    def __init__(self, terminal: ClientTerminal) -> None:
        super().__init__()
        self._terminal = terminal

    @override
    async def invoke(self, args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
        terminal = self._terminal
        if not terminal.available:
            return await super().invoke(args, ctx)
        cwd = self.checked_cwd(args, ctx)
        timeout_s = args.timeout_s if args.timeout_s is not None else self.default_timeout_s
        limit_s = terminal.timeout_s
        env: dict[str, str] = {}
        if not ctx.trusted_folder:  # the git overrides only: the terminal keeps the client's
            whole = await to_thread.run_sync(command_environment, cwd)
            env = {k: v for k, v in whole.items() if is_git_override(k)}
        try:
            async with asyncio.timeout(limit_s):
                terminal_id = await terminal.create(
                    self.shell, ["-c", args.command], str(cwd), self.max_output_bytes, env
                )
        except (TerminalFailed, TimeoutError) as exc:
            raise ToolError(
                f"the editor could not start the command: {str(exc) or 'no answer in time'}"
            ) from None
        terminal.show(args.command, terminal_id)
        try:
            return await self._supervise_terminal(terminal_id, timeout_s, limit_s)
        except TerminalFailed as exc:
            await self._cleanup(terminal_id, kill=True)
            raise ToolError(f"the editor's terminal failed: {exc}") from None
        except BaseException:  # cancelled: the command must not outlive the call
            await self._cleanup(terminal_id, kill=True)
            raise

    async def _supervise_terminal(
        self, terminal_id: str, timeout_s: float, limit_s: float
    ) -> ToolResult:
        terminal = self._terminal
        timed_out = False
        try:
            async with asyncio.timeout(timeout_s):
                status = await terminal.wait_for_exit(terminal_id)
        except TimeoutError:
            timed_out = True
            async with asyncio.timeout(limit_s):
                await terminal.kill(terminal_id)
        async with asyncio.timeout(limit_s):
            output = await terminal.output(terminal_id)
        await self._cleanup(terminal_id, kill=False)
        text = output.text or "(no output)"
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
        """Kill (when asked) and release the terminal, even in a cancelled call."""
        terminal = self._terminal
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_S):
            try:
                if kill:
                    await terminal.kill(terminal_id)
                await terminal.release(terminal_id)
            except Exception as exc:
                log.warning("session %s: terminal %s: %s", terminal.session_id, terminal_id, exc)


class ClientReadFile(ReadFile):
    """``read_file`` that learns the client's text of the file first (``refresh``)."""

    def __init__(self, refresh: Callable[[Path], Awaitable[None]]) -> None:
        super().__init__()
        self._refresh = refresh

    @override
    async def read(self, args: ReadFileArgs, ctx: ToolContext, stamp: ReadStamp) -> ToolResult:
        # ``read``, not ``invoke``: the call pipeline reads with the stamp it took once.
        try:
            path = resolve_in_workspace(ctx.root, args.path)
        except ToolError:
            return await super().read(args, ctx, stamp)  # it says what is wrong with the path
        await self._refresh(path)
        return await super().read(args, ctx, stamp)


def client_tools(
    tools: ToolRegistry,
    terminal: ClientTerminal,
    refresh: Callable[[Path], Awaitable[None]],
) -> ToolRegistry:
    """``tools`` with ``run_command`` and ``read_file`` going through the client when it can.

    Args:
        tools: The session's usual tools.
        terminal: The client's terminal (``ClientRunCommand``).
        refresh: Learns the client's text of a file before ``read_file`` reads it.
    """
    replaced: list[AnyTool] = []
    for name in tools.names:
        tool = tools.get(name)
        assert tool is not None
        if name == "run_command":
            tool = ClientRunCommand(terminal)
        elif name == "read_file":
            tool = ClientReadFile(refresh)
        replaced.append(tool)
    return ToolRegistry(replaced)
