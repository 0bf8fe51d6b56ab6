"""The server process and its LSP connection: spawn, ``initialize``, stderr, shutdown.

The server runs as a child in a process session of its own (Ctrl-C in the terminal reaches the
client only, which then cancels the session cleanly instead of the server dying mid-edit). The
client speaks LSP base-protocol framing over its stdio through pygls's
:class:`~pygls.lsp.client.LanguageClient`, declares the capabilities of a small editor
(:func:`client_capabilities`) and drains its stderr so the pipe never blocks, keeping the tail
for error messages. Shutting down asks politely (``shutdown``, ``exit``), then terminates the
server's process group.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from cadenza import __version__
from cadenza.client.errors import ServerStartError, rpc_message
from cadenza.client.options import ClientOptions
from cadenza.client.wire import CadenzaClientProtocol, MessageSink, client_converter
from cadenza.schema.methods import START_SESSION

log = logging.getLogger(__name__)

STDERR_TAIL_LINES = 40
TRUST_FLAG = "--trust-workspace"
"""``cadenza serve``'s option naming the folder the person trusts for the server's life."""
CLIENT_NAME = "cadenza-run"


class ServerLanguageClient(LanguageClient):
    """pygls's client with a hook that reports the server's exit."""

    def __init__(self, on_exit: Callable[[int | None], None]) -> None:
        super().__init__(
            CLIENT_NAME,
            __version__,
            protocol_cls=CadenzaClientProtocol,
            converter_factory=client_converter,
        )
        self._on_exit = on_exit

    @property
    def message_sink(self) -> MessageSink | None:
        """What sees every raw request and notification from the server (``--events``)."""
        return self._cadenza_protocol.message_sink

    @message_sink.setter
    def message_sink(self, sink: MessageSink | None) -> None:
        self._cadenza_protocol.message_sink = sink

    @property
    def _cadenza_protocol(self) -> CadenzaClientProtocol:
        protocol = self.protocol
        assert isinstance(protocol, CadenzaClientProtocol)  # protocol_cls above
        return protocol

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The server process started by ``start_io`` (pygls keeps it in a private field)."""
        return self._server

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        """Called by pygls when the server process has exited."""
        self._on_exit(server.returncode)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Called by pygls when a message cannot be handled; logged, the session goes on."""
        log.warning("protocol error (%s): %s", getattr(source, "__name__", source), error)


class StderrTail:
    """The server's stderr: read so it never blocks on a full pipe, its last lines kept.

    Args:
        sink: Called with each line as it arrives, or None.
    """

    def __init__(self, sink: Callable[[str], None] | None) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._sink = sink
        self._task: asyncio.Task[None] | None = None

    def follow(self, stream: asyncio.StreamReader) -> None:
        """Start draining ``stream`` in the background."""
        self._task = asyncio.create_task(self._drain(stream))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            text = line.decode("utf-8", errors="replace").rstrip()
            self.lines.append(text)
            if self._sink is not None:
                self._sink(text)

    async def note(self) -> str:
        """``: <last stderr lines>`` once the pipe is drained (waits at most one second)."""
        if self._task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._task), 1.0)
        tail = [line for line in self.lines if line.strip()][-12:]
        return (":\n" + "\n".join(tail)) if tail else ""

    async def stop(self) -> None:
        """Stop draining (the server is gone or being abandoned)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def spawn(lsp: ServerLanguageClient, options: ClientOptions, stderr: StderrTail) -> None:
    """Start the server process on ``lsp``'s stdio and drain its stderr into ``stderr``.

    A run that trusts the workspace (``--trust-workspace``) says so on the server's command
    line (``cadenza serve --trust-workspace FOLDER``): the server takes trust from the person's
    own command line only, never from ``initializationOptions``.

    Raises:
        ServerStartError: The command cannot be run.
    """
    command = list(options.server_command)
    if options.trust_workspace:
        command += [TRUST_FLAG, str(options.workspace.resolve())]
    for flag, rules in (("--allow", options.allow), ("--deny", options.deny)):
        command += [part for rule in rules for part in (flag, rule)]
    env = dict(options.env) if options.env is not None else None
    try:
        # A session of its own: Ctrl-C in the terminal reaches this client only, which then
        # cancels the session cleanly instead of the server dying mid-edit.
        await lsp.start_io(command[0], *command[1:], env=env, start_new_session=True)
    except OSError as exc:
        raise ServerStartError(
            f"cannot start the Cadenza server ({' '.join(command)}): {exc.strerror or exc}"
        ) from None
    process = lsp.process
    if process is not None and process.stderr is not None:
        stderr.follow(process.stderr)


async def initialize(
    lsp: ServerLanguageClient,
    params: types.InitializeParams,
    *,
    timeout: float,
    stderr: StderrTail,
) -> types.InitializeResult:
    """Send ``initialize`` and check that the server offers ``cadenza.startSession``.

    Raises:
        ServerStartError: The server exits or refuses ``initialize``, does not answer within
            ``timeout`` seconds, or does not offer ``cadenza.startSession``.
    """
    try:
        result = await asyncio.wait_for(lsp.initialize_async(params), timeout)
    except TimeoutError:
        raise ServerStartError(
            f"the server did not answer initialize within {timeout:g} s (is the machine very "
            "busy? try again when it is quieter)" + await stderr.note()
        ) from None
    except JsonRpcException as exc:
        raise ServerStartError(f"the server refused initialize: {rpc_message(exc)}") from None
    except RuntimeError:  # pygls fails pending requests this way when the server exits
        raise ServerStartError("the server exited during start-up" + await stderr.note()) from None
    commands = result.capabilities.execute_command_provider
    if commands is None or START_SESSION not in commands.commands:
        raise ServerStartError(f"the server does not offer the command {START_SESSION}")
    return result


def initialize_params(
    root: Path, max_steps: int | None, time_budget_s: float | None = None
) -> types.InitializeParams:
    """``initialize`` for the workspace folder ``root`` (resolved).

    ``maxSteps`` and ``timeBudgetS`` when set.
    """
    options: dict[str, Any] = {}
    if max_steps is not None:
        options["maxSteps"] = max_steps
    if time_budget_s is not None:
        options["timeBudgetS"] = time_budget_s
    root_uri: str = from_fs_path(str(root))
    return types.InitializeParams(
        process_id=os.getpid(),
        client_info=types.ClientInfo(name=CLIENT_NAME, version=__version__),
        root_uri=root_uri,
        workspace_folders=[types.WorkspaceFolder(uri=root_uri, name=root.name)],
        initialization_options=options,
        capabilities=client_capabilities(),
    )


def client_capabilities() -> types.ClientCapabilities:
    """What the headless client supports (LSP 3.17 ``ClientCapabilities``)."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    types.ResourceOperationKind.Create,
                    types.ResourceOperationKind.Rename,
                    types.ResourceOperationKind.Delete,
                ],
                failure_handling=types.FailureHandlingKind.Transactional,
                # Review mode ``confirm``: annotated edits are shown and confirmed here.
                change_annotation_support=types.ChangeAnnotationsSupportOptions(
                    groups_on_label=False
                ),
            ),
            workspace_folders=True,
        ),
        window=types.WindowClientCapabilities(
            work_done_progress=True,
            show_message=types.ShowMessageRequestClientCapabilities(),
        ),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
        # exactEncodings: closed files are decoded as the server decodes them and written
        # back in their own encoding (cadenza.client.text). requestPermission: permission
        # requests arrive typed, answered by option kind (cadenza.client.permissions).
        experimental={
            "cadenza": {"askUser": True, "requestPermission": True, "exactEncodings": True}
        },
    )


async def shut_down(lsp: ServerLanguageClient, timeout: float) -> None:
    """``shutdown`` then ``exit`` the server; terminate it if it lingers; stop ``lsp``."""
    process = lsp.process
    if process is not None and process.returncode is None:
        with contextlib.suppress(JsonRpcException, RuntimeError, TimeoutError):
            await asyncio.wait_for(lsp.shutdown_async(None), timeout)
            lsp.exit(None)
        await _reap(process, timeout)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(lsp.stop(), timeout)  # type: ignore[no-untyped-call]


async def _reap(process: asyncio.subprocess.Process, timeout: float) -> None:
    """Wait for ``process`` to exit; then SIGTERM, then SIGKILL its process group."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError):
                # The server leads its own process group (start_new_session): this reaches
                # helpers it started, such as a llama-server, if it did not stop them.
                os.killpg(process.pid, sig)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), timeout)
            return
