"""The Cadenza language server: one thin handler per LSP method or command.

Each handler validates its input and delegates: configuration to ``options``, sessions to
``sessions.SessionManager``. Invalid command arguments are answered with JSON-RPC
``InvalidParams`` (-32602) and the server keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from cadenza import __version__
from cadenza.lsp import completions, permission_commands, pickers, review_commands, steer
from cadenza.lsp.framing import BoundedStdinReader, serve_messages
from cadenza.lsp.options import load_server_config
from cadenza.lsp.params import InvalidArguments, invalid_params_message, parse_command_args
from cadenza.lsp.protocol import CadenzaProtocol, command_work_done_token, current_request_id
from cadenza.schema.commands import (
    CancelSessionArgs,
    CancelSessionResult,
    ConfigureSessionArgs,
    ListSessionsArgs,
    LoadSessionArgs,
    PromptSessionArgs,
    PromptSessionResult,
    ReplySessionArgs,
    RestoreTurnArgs,
    StartSessionArgs,
    StartSessionResult,
    UndoSessionArgs,
)
from cadenza.schema.methods import (
    CANCEL_SESSION,
    CONFIGURE_SESSION,
    LIST_SESSIONS,
    LOAD_SESSION,
    PROMPT_SESSION,
    REPLY_SESSION,
    RESTORE_TURN,
    START_SESSION,
    UNDO_SESSION,
)

if TYPE_CHECKING:
    from cadenza.config import CadenzaConfig
    from cadenza.lsp.sessions import SessionManager
    from cadenza.lsp.trust import TrustQuestion

log = logging.getLogger(__name__)


class CadenzaServer(LanguageServer):
    """pygls server with full text sync and a session manager."""

    def __init__(self) -> None:
        super().__init__(
            name="cadenza",
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=CadenzaProtocol,
        )
        self._sessions: SessionManager | None = None
        self._config: CadenzaConfig | None = None
        self.trust_question: TrustQuestion | None = None
        """The folder's workspace trust question, asked before the first session."""
        self.person_rules: tuple[list[str], list[str]] = ([], [])
        """The allow and deny rules of ``cadenza serve --allow/--deny``: the person's own
        command line, added to their ``cadenza.toml``'s, never from ``initializationOptions``."""
        self.trusted_folder: Path | None = None
        """The folder ``cadenza serve --trust-workspace FOLDER`` trusts for this server's life
        (resolved): the person's own command line, never ``initializationOptions``."""
        self._cadenza_protocol.on_cancel_request = self._cancel_request
        self.shutdown_received = False
        """True once ``shutdown`` was answered: ``exit`` then ends with status 0, else 1."""

    @property
    def sessions(self) -> SessionManager:
        """The session manager, made on first use (after ``initialize`` was answered).

        Importing it imports the engine, the providers and the tools: ~30% of the server's
        import time, which ``initialize`` no longer waits for (docs/lab/performance.md);
        ``initialized`` makes it, so the first command does not wait either.
        """
        if self._sessions is None:
            from cadenza.lsp.sessions import SessionManager

            self._sessions = SessionManager(self)
            if self._config is not None:
                self._sessions.config = self._config
        return self._sessions

    def configure(self, config: CadenzaConfig) -> None:
        """Use ``config`` (from ``initialize``) for the sessions started from now on."""
        if any(self.person_rules):
            permissions = config.permissions.with_rules(*self.person_rules)
            config = config.model_copy(update={"permissions": permissions})
        self._config = config
        if self._sessions is not None:
            self._sessions.config = config

    async def close_sessions(self) -> None:
        """Cancel every session and close the providers (nothing to do if none was made)."""
        if self._sessions is not None:
            await self._sessions.aclose()

    def _cancel_request(self, request_id: int | str) -> None:
        if self._sessions is not None:
            self._sessions.cancel_request(request_id)

    @property
    def _cadenza_protocol(self) -> CadenzaProtocol:
        assert isinstance(self.protocol, CadenzaProtocol)
        return self.protocol

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio as pygls does, reading through ``framing.serve_messages``."""
        self._stop_event = Event()
        reader = BoundedStdinReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        terminated = False
        try:
            asyncio.run(serve_messages(self._stop_event, reader, self._cadenza_protocol))
        except BrokenPipeError:
            log.error("Connection to the client is lost! Shutting down the server.")
        except KeyboardInterrupt:
            pass
        except SystemExit:  # SIGTERM (lsp.main): the loop unwound, sessions were cancelled
            terminated = True
        finally:
            if terminated:
                # pygls's shutdown joins its thread pool, whose stdin reader blocks in read().
                self._stop_event.set()
            else:
                self.shutdown()  # type: ignore[no-untyped-call]

    def start_tcp(self, host: str, port: int, *, allow_remote: bool = False) -> None:
        """Serve one client over TCP, guarded as ``tcp.serve_tcp`` says (not pygls's own)."""
        from cadenza.lsp.tcp import serve_tcp

        serve_tcp(self, host, port, allow_remote=allow_remote)


@contextlib.contextmanager
def invalid_params(command: str) -> Iterator[None]:
    """Turn ``InvalidArguments`` into a JSON-RPC ``InvalidParams`` error naming ``command``.

    Raises:
        JsonRpcInvalidParams: Code -32602, message ``Invalid Params: COMMAND: PROBLEM``, or the
            problem alone when it is an ``UnusableChoice`` (words for the person).
    """
    try:
        yield
    except InvalidArguments as exc:
        log.info("rejected %s: %s", command, exc)
        raise JsonRpcInvalidParams(message=invalid_params_message(command, exc)) from None


@contextlib.contextmanager
def request_failed(command: str) -> Iterator[None]:
    """Turn ``SessionRequestFailed`` into JSON-RPC error -32803 (``RequestFailed``, LSP 3.17).

    Raises:
        JsonRpcException: Code -32803 with the reason as the message.
    """
    from cadenza.lsp.sessions import SessionRequestFailed

    try:
        yield
    except SessionRequestFailed as exc:
        log.info("refused %s: %s", command, exc)
        raise JsonRpcException(
            message=str(exc), code=types.LSPErrorCodes.RequestFailed.value
        ) from None


def initialize(ls: CadenzaServer, params: types.InitializeParams) -> None:
    """Load the configuration; show and log each problem with it as a warning (never fail)."""
    folders = params.workspace_folders or []
    root_uri = folders[0].uri if folders else params.root_uri
    root = to_fs_path(root_uri) if root_uri else None
    folder = Path(root) if root else None
    granted = folder is not None and folder.resolve() == ls.trusted_folder
    loaded = load_server_config(folder, params.initialization_options, granted=granted)
    for warning in loaded.warnings:
        log.warning("%s", warning)
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=warning)
        )
    ls.configure(loaded.config)
    if loaded.trust is not None and loaded.trust.undecided:
        from cadenza.lsp.trust import TrustQuestion  # rare: a folder config awaiting trust

        ls.trust_question = TrustQuestion(
            ls,
            loaded.trust,
            options=params.initialization_options,
            configure=ls.configure,
            timeout_s=loaded.config.permissions.timeout_s,
        )


async def settle_trust(ls: CadenzaServer) -> None:
    """Ask the pending workspace trust question before a session runs (``lsp.trust``)."""
    if ls.trust_question is not None and not ls.trust_question.settled:
        await ls.trust_question.settle()


def initialized(ls: CadenzaServer, params: types.InitializedParams) -> None:
    """Make the session manager now (imports the engine), not at the first command."""
    ls.sessions  # noqa: B018 - the property makes it


def did_save(ls: CadenzaServer, params: types.DidSaveTextDocumentParams) -> None:
    """Nothing to do: pygls keeps open buffers in sync; saving changes no buffer."""
    log.debug("saved %s", params.text_document.uri)


async def shutdown(ls: CadenzaServer, params: None) -> None:
    """Cancel every session and close the providers (their child processes included)."""
    await completions.close(ls)
    await ls.close_sessions()
    ls.shutdown_received = True


async def start_session(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.startSession {task, workflow?, rootUri?, model?}`` → ``{sessionId}`` at once.

    At once unless the folder's trust question is pending: it is answered first.
    """
    token, request_id = command_work_done_token(), current_request_id()
    with invalid_params(START_SESSION):
        args = parse_command_args(StartSessionArgs, arguments)
    await settle_trust(ls)
    with invalid_params(START_SESSION):
        session_id = ls.sessions.start(args, work_done_token=token, request_id=request_id)
    return StartSessionResult(session_id=session_id).wire()


def cancel_session(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.cancelSession {sessionId}`` → ``{cancelled}``."""
    with invalid_params(CANCEL_SESSION):
        args = parse_command_args(CancelSessionArgs, arguments)
    return CancelSessionResult(cancelled=ls.sessions.cancel(args.session_id)).wire()


def reply_session(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.replySession {sessionId, text}`` → ``{resumed, state}``.

    Raises:
        JsonRpcInvalidParams: Malformed arguments (-32602).
        JsonRpcException: -32803 when the session is unknown, running or over.
    """
    with invalid_params(REPLY_SESSION):
        args = parse_command_args(ReplySessionArgs, arguments)
    with request_failed(REPLY_SESSION):
        return ls.sessions.reply(args.session_id, args.text).wire()


async def prompt_session(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.promptSession {sessionId, text, context?}`` → ``{sessionId}`` at once.

    Raises:
        JsonRpcInvalidParams: Malformed arguments (-32602).
        JsonRpcException: -32803 when the session is unknown, running, or cannot go on.
    """
    with invalid_params(PROMPT_SESSION):
        args = parse_command_args(PromptSessionArgs, arguments)
    token = command_work_done_token()
    await settle_trust(ls)
    with request_failed(PROMPT_SESSION):
        await ls.sessions.prompt(args, work_done_token=token)
    return PromptSessionResult(session_id=args.session_id).wire()


def configure_session(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.configureSession {sessionId, model?, workflow?}`` → the next turns' choice.

    The result is ``{sessionId, model, workflow}``.

    Raises:
        JsonRpcInvalidParams: Malformed arguments, or an unknown model or workflow (-32602).
        JsonRpcException: -32803 when the session is unknown.
    """
    with invalid_params(CONFIGURE_SESSION):
        args = parse_command_args(ConfigureSessionArgs, arguments)
        with request_failed(CONFIGURE_SESSION):
            return ls.sessions.configure(args).wire()


def list_sessions(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.listSessions {limit?}`` (the argument may be omitted) → ``{sessions}``."""
    with invalid_params(LIST_SESSIONS):
        args = parse_command_args(ListSessionsArgs, arguments) if arguments else None
    result = ls.sessions.list()
    if args is not None and args.limit is not None:
        result = result.model_copy(update={"sessions": result.sessions[: args.limit]})
    return result.wire()


def load_session(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.loadSession {sessionId}`` → ``{session, updates}`` after the replay.

    Raises:
        JsonRpcInvalidParams: Malformed arguments (-32602).
        JsonRpcException: -32803 when the session is unknown or its transcript unreadable.
    """
    with invalid_params(LOAD_SESSION):
        args = parse_command_args(LoadSessionArgs, arguments)
    with request_failed(LOAD_SESSION):
        return ls.sessions.load(args.session_id).wire()


async def undo_session(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.undoSession {sessionId}`` → ``{sessionId, files, unchanged}``.

    Raises:
        JsonRpcInvalidParams: Malformed arguments (-32602).
        JsonRpcException: Code -32803 (``RequestFailed``, LSP 3.17) when the undo was refused;
            the message names the file and why, and nothing was undone.
    """
    with invalid_params(UNDO_SESSION):
        args = parse_command_args(UndoSessionArgs, arguments)
    with request_failed(UNDO_SESSION):
        return (await ls.sessions.undo(args.session_id)).wire()


async def restore_turn(ls: CadenzaServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.restoreTurn {sessionId, turn}`` → ``{sessionId, turn, text, files, ...}``.

    Raises:
        JsonRpcInvalidParams: Malformed arguments (-32602).
        JsonRpcException: Code -32803 (``RequestFailed``) when the session is running or
            unknown, has no such turn, or its files could not be put back.
    """
    with invalid_params(RESTORE_TURN):
        args = parse_command_args(RestoreTurnArgs, arguments)
    with request_failed(RESTORE_TURN):
        return (await ls.sessions.restore_turn(args.session_id, args.turn)).wire()


def create_server() -> CadenzaServer:
    """A new server with every handler registered."""
    server = CadenzaServer()
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.SHUTDOWN)(shutdown)
    server.command(START_SESSION)(start_session)
    server.command(CANCEL_SESSION)(cancel_session)
    server.command(UNDO_SESSION)(undo_session)
    server.command(RESTORE_TURN)(restore_turn)
    server.command(REPLY_SESSION)(reply_session)
    server.command(LIST_SESSIONS)(list_sessions)
    server.command(LOAD_SESSION)(load_session)
    server.command(PROMPT_SESSION)(prompt_session)
    server.command(CONFIGURE_SESSION)(configure_session)
    review_commands.register(server)
    steer.register(server)
    pickers.register(server)
    completions.register(server)
    permission_commands.register(server)
    return server
