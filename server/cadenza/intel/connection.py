"""One language server process: started in its own process group, spoken to with pygls' client.

The server runs over stdio in a new session (its own process group, registered with
``cadenza.procgroups`` so a Cadenza exit kills it); its stderr is drained so it can never block
on a full pipe. Every request has a bound (an answer that comes after it is dropped); a server
that exits fails its pending requests at once (pygls' client does that), and any failure is an
``IntelError``. ``aclose`` asks it to shut down, then ends its whole group whatever it does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

from cadenza.intel.servers import ServerSpec
from cadenza.procgroups import forget, signal_group, start_group
from cadenza.tools.intel import IntelError

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
"""Seconds from starting the server to its ``initialize`` answer (a cold start may index)."""

REQUEST_TIMEOUT_S = 20.0
"""Seconds one request may take."""

SHUTDOWN_S = 2.0
"""Seconds the server has to answer ``shutdown`` and exit before its group is killed."""

KILL_GRACE_S = 1.0
"""Seconds between SIGTERM and SIGKILL to the group."""

T = TypeVar("T")


def _capabilities() -> types.ClientCapabilities:
    """What Cadenza's client handles: sync, references, definition, rename, both diagnostics."""
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[
                types.PositionEncodingKind.Utf32,
                types.PositionEncodingKind.Utf16,
            ]
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(),
            references=types.ReferenceClientCapabilities(),
            definition=types.DefinitionClientCapabilities(link_support=True),
            rename=types.RenameClientCapabilities(prepare_support=False),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=types.DiagnosticClientCapabilities(),
        ),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            configuration=True,
        ),
    )


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, taking the ``initialize`` answer as plain JSON.

    lsprotocol's strict structuring refused the capabilities pylsp, ty and pyrefly announce
    (their notebook selectors), and a refused answer never resolves its request: Cadenza reads
    the few capabilities it needs from the plain answer instead.
    """

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method == types.INITIALIZE:
            return None
        return super().get_result_type(method)


class ServerConnection:
    """A started language server and the pygls client speaking to it."""

    def __init__(self, spec: ServerSpec, program: str, root: Path) -> None:
        self.spec = spec
        self.root = root
        self.client = LanguageClient("cadenza", "1", protocol_cls=_Protocol)
        self._program = program
        self._pgid: int | None = None
        self._drain: asyncio.Task[None] | None = None
        self.encoding: str = types.PositionEncodingKind.Utf16
        self.pull_diagnostics = False
        """The server answers ``textDocument/diagnostic``."""
        self.published: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self.publishes = 0
        """Diagnostics notifications received (the settle wait watches it)."""
        self._install_handlers()

    def _install_handlers(self) -> None:
        """Answer what servers ask of a client; keep their diagnostics; log their messages."""
        name = self.spec.name

        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = (params.version, list(params.diagnostics))
            self.publishes += 1

        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]  # the server's own defaults

        def message(params: types.LogMessageParams | types.ShowMessageParams) -> None:
            log.debug("%s: %s", name, params.message)

        def nothing(params: object) -> None:
            return None

        handlers: dict[str, Callable[[Any], Any]] = {
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: diagnostics,
            types.WORKSPACE_CONFIGURATION: configuration,
            types.WINDOW_LOG_MESSAGE: message,
            types.WINDOW_SHOW_MESSAGE: message,
            types.CLIENT_REGISTER_CAPABILITY: nothing,
            types.CLIENT_UNREGISTER_CAPABILITY: nothing,
            types.WINDOW_WORK_DONE_PROGRESS_CREATE: nothing,
            types.PROGRESS: nothing,
        }
        for method, handler in handlers.items():
            self.client.feature(method)(handler)

    @property
    def alive(self) -> bool:
        """The server runs and the client still talks to it."""
        server = self.client._server
        return server is not None and server.returncode is None and not self.client.stopped

    def _server_pid(self) -> int:
        server = self.client._server
        assert server is not None
        return server.pid

    async def start(self) -> None:
        """Start the server and initialize it.

        Raises:
            IntelError: It did not start, or did not answer ``initialize`` in time.
        """
        spawn = self.client.start_io(
            self._program, *self.spec.args, cwd=str(self.root), start_new_session=True
        )
        try:
            await start_group(spawn, lambda _: self._server_pid())
        except OSError as exc:
            raise IntelError(f"{self.spec.name} could not be started: {exc}") from None
        server = self.client._server
        assert server is not None
        self._pgid = server.pid
        if server.stderr is not None:
            self._drain = asyncio.create_task(_drain(server.stderr, self.spec.name))
        params = types.InitializeParams(
            process_id=None,
            root_uri=self.root.as_uri(),
            capabilities=_capabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
            client_info=types.ClientInfo(name="cadenza"),
            initialization_options=(
                self.spec.init_options(self._program) if self.spec.init_options else None
            ),
        )
        result: Any = await self.request(self.client.initialize_async(params), START_TIMEOUT_S)
        # pygls hands an untyped answer over as nested namedtuple-like ``Object``s.
        capabilities = getattr(result, "capabilities", None)
        if capabilities is None:
            raise IntelError(f"{self.spec.name} answered initialize with something unusable")
        self.pull_diagnostics = getattr(capabilities, "diagnosticProvider", None) is not None
        if getattr(capabilities, "positionEncoding", None) == types.PositionEncodingKind.Utf32:
            self.encoding = types.PositionEncodingKind.Utf32
        self.client.initialized(types.InitializedParams())

    async def request(self, call: Awaitable[T], timeout_s: float | None = None) -> T:
        """Await a request's answer within ``timeout_s`` (default ``REQUEST_TIMEOUT_S``).

        Raises:
            IntelError: No answer in time, the server stopped, or it answered an error.
        """
        name = self.spec.name
        timeout_s = REQUEST_TIMEOUT_S if timeout_s is None else timeout_s
        # Shielded: giving up must not cancel pygls' own future for the request. A server that
        # answers after the bound (slow, or hung for a while) then completes it and the answer
        # is dropped, where a cancelled future made pygls log a traceback as an error for it.
        answer = asyncio.ensure_future(call)
        answer.add_done_callback(_retrieve)
        try:
            with anyio.fail_after(timeout_s):
                return await asyncio.shield(answer)
        except TimeoutError:
            raise IntelError(f"{name} did not answer within {timeout_s:.0f} s") from None
        except Exception as exc:  # pygls: RuntimeError when the server exited, JSON-RPC errors
            if not self.alive:
                raise IntelError(f"{name} stopped") from None
            raise IntelError(f"{name} failed: {exc}") from None

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (dropped when the server is gone: the next request says so)."""
        if self.alive:
            with contextlib.suppress(Exception):
                self.client.protocol.notify(method, params)

    async def aclose(self) -> None:
        """Shut the server down; end its whole process group in any case (bounded)."""
        with anyio.CancelScope(shield=True):
            if self.alive:
                with contextlib.suppress(Exception), anyio.move_on_after(SHUTDOWN_S):
                    await self.client.shutdown_async(None)
                    self.client.exit(None)
                    server = self.client._server
                    while server is not None and server.returncode is None:
                        await anyio.sleep(0.02)
            await self._kill_group()
            with contextlib.suppress(Exception), anyio.move_on_after(SHUTDOWN_S):
                await self.client.stop()  # type: ignore[no-untyped-call]
            if self._drain is not None:
                self._drain.cancel()

    async def _kill_group(self) -> None:
        pgid = self._pgid
        if pgid is None:
            return
        if signal_group(pgid, signal.SIGTERM):
            with anyio.move_on_after(KILL_GRACE_S):
                while signal_group(pgid, 0):
                    await anyio.sleep(0.02)
            signal_group(pgid, signal.SIGKILL)
        forget(pgid)
        server = self.client._server
        if server is not None:
            with anyio.move_on_after(SHUTDOWN_S):
                await server.wait()


def _retrieve(answer: asyncio.Future[Any]) -> None:
    """Take a request's failure that came after its waiter gave up (no "never retrieved")."""
    if not answer.cancelled():
        answer.exception()


async def _drain(stream: asyncio.StreamReader, name: str) -> None:
    """Read the server's stderr to its end (logged at debug level), so it never blocks."""
    with contextlib.suppress(Exception):
        while line := await stream.readline():
            log.debug("%s: %s", name, line.decode(errors="replace").rstrip())
