"""The headless client: spawn ``cadenza serve``, run one agent session, report the outcome.

It speaks to the server through pygls's :class:`~pygls.lsp.client.BaseLanguageClient` over the
server's stdio (LSP base protocol framing), declares the capabilities of a small editor
(``workspace/applyEdit`` with resource operations, work-done progress, UTF-16 positions,
``experimental.cadenza.askUser``), and serves the server's requests: edits are written to disk by
:class:`~cadenza.client.edits.WorkspaceEditApplier`, questions go to a
:class:`~cadenza.client.prompts.Prompter`. Everything else is handed to an observer.

Typical use::

    async with HeadlessClient(ClientOptions(workspace=Path("."))) as client:
        await client.start_session("rename foo to bar")
        outcome = await client.wait()
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from cadenza import __version__
from cadenza.client.edits import FileChange, WorkspaceEditApplier
from cadenza.client.eventlog import EventLog
from cadenza.client.events import ClientEvent, Observer, UserAsked, ignore_events
from cadenza.client.handlers import ServerRequests
from cadenza.client.prompts import DecliningPrompter, Prompter
from cadenza.client.summary import merge_changes
from cadenza.client.wire import CadenzaClientProtocol, MessageSink, client_converter
from cadenza.schema.commands import (
    DEFAULT_WORKFLOW,
    CancelSessionResult,
    DocumentIdentifier,
    StartSessionArgs,
    StartSessionResult,
    UndoSessionResult,
)
from cadenza.schema.methods import CANCEL_SESSION, REPLY_SESSION, START_SESSION, UNDO_SESSION
from cadenza.schema.updates import SessionEnd

log = logging.getLogger(__name__)

DEFAULT_SERVER_COMMAND: tuple[str, ...] = (sys.executable, "-m", "cadenza", "serve")
STDERR_TAIL_LINES = 40


class ClientError(Exception):
    """The client could not run the session; the message is meant for the person."""


class ServerStartError(ClientError):
    """The server could not be started or initialized (missing command, crash, refusal)."""


class ServerExitedError(ClientError):
    """The server process ended before the session did."""


class SessionStartError(ClientError):
    """The server refused ``cadenza.startSession`` (e.g. invalid arguments or unknown model)."""


@dataclass(frozen=True, kw_only=True)
class ClientOptions:
    """How to start the server and the session.

    Attributes:
        workspace: The workspace folder (edits outside it are refused).
        model: ``PROVIDER/MODEL`` for the session, or None for the server's configured default.
        workflow: The workflow to run (e.g. ``plan-implement-review``), or None for the
            server's ``default``.
        max_steps: Model requests allowed in the session (``initializationOptions.maxSteps``).
        server_command: The command that starts a server speaking LSP framing on stdio.
        env: The server's environment (default: this process's).
        start_timeout: Seconds to wait for the ``initialize`` answer.
        shutdown_timeout: Seconds to wait for ``shutdown`` and for the process to exit after
            ``exit`` before it is terminated.
        stderr_sink: Called with each line the server writes to stderr (default: kept only as
            the tail shown when the server fails).
        events_path: A file to which every request and notification from the server is
            appended as one JSON line (:mod:`cadenza.client.eventlog`), or None.
        review: ``confirm``: every edit is shown to the prompter before it is written;
            ``auto``: edits are written at once; None: the server's configured ``review``.
        open_document: The file the person has open, sent as ``textDocument`` (the server
            primes it into the first message under the local loop variant), or None.
    """

    workspace: Path
    model: str | None = None
    workflow: str | None = None
    max_steps: int | None = None
    server_command: Sequence[str] = DEFAULT_SERVER_COMMAND
    env: Mapping[str, str] | None = None
    start_timeout: float = 60.0
    shutdown_timeout: float = 5.0
    stderr_sink: Callable[[str], None] | None = None
    events_path: Path | None = None
    review: Literal["auto", "confirm"] | None = None
    open_document: Path | None = None


@dataclass(frozen=True, kw_only=True)
class SessionOutcome:
    """How a session ended.

    Attributes:
        session_id: The server's id of the session.
        stop_reason: One of ``wire.KNOWN_STOP_REASONS`` (or a newer reason).
        message: The final answer, or the error.
        steps: Model requests made.
        changes: Files changed on disk, one entry per path.
        wall_time: Seconds from ``cadenza.startSession`` to ``session_end``.
        missing_info: For ``needs_user_input``: what the agent needs from the person.
        why_no_default: For ``needs_user_input``: why it could not pick a default.
    """

    session_id: str
    stop_reason: str
    message: str
    steps: int
    changes: tuple[FileChange, ...]
    wall_time: float
    missing_info: str | None = None
    why_no_default: str | None = None


class _LanguageClient(LanguageClient):
    """pygls's client with a hook that reports the server's exit."""

    def __init__(self, on_exit: Callable[[int | None], None]) -> None:
        super().__init__(
            "cadenza-run",
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


@dataclass(kw_only=True)
class _Tracker:
    """What the client has seen of its session."""

    session_id: str | None = None
    started: float = 0.0
    end: asyncio.Future[SessionEnd] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    exited: asyncio.Future[int | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    changes: list[FileChange] = field(default_factory=list)
    waiting: SessionEnd | None = None
    """A ``session_end`` after which the session waits for the person (the server asks next)."""
    grace: asyncio.TimerHandle | None = None


WAITING_STOP_REASONS = frozenset({"needs_user_input", "waiting_human"})
PROMPT_GRACE_S = 5.0
"""Seconds to wait for the server's prompt after a waiting ``session_end`` (older servers
send none); then the waiting end is the outcome."""


class HeadlessClient:
    """One server process running one agent session; an async context manager.

    Args:
        options: Server command, workspace, model and timeouts.
        observer: Receives every session update, progress, edit and prompt as it happens.
        prompter: Answers the server's questions (default: declines them).
    """

    def __init__(
        self,
        options: ClientOptions,
        *,
        observer: Observer = ignore_events,
        prompter: Prompter | None = None,
    ) -> None:
        self.options = options
        self.root = options.workspace.resolve()
        self.observer = observer
        self.prompter: Prompter = prompter or DecliningPrompter()
        self._tracker: _Tracker | None = None
        self._lsp: _LanguageClient | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        self._events: EventLog | None = None

    async def __aenter__(self) -> HeadlessClient:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def root_uri(self) -> str:
        """The ``file:`` URI of the workspace root."""
        uri: str = from_fs_path(str(self.root))
        return uri

    @property
    def session_id(self) -> str | None:
        """The running session's id, once ``cadenza.startSession`` has answered."""
        return self._tracker.session_id if self._tracker else None

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr."""
        return "\n".join(self._stderr)

    @property
    def changes(self) -> tuple[FileChange, ...]:
        """Files changed so far, one entry per path."""
        return merge_changes(self._tracker.changes if self._tracker else ())

    async def start(self) -> None:
        """Spawn the server, ``initialize`` it and send ``initialized``.

        Raises:
            ServerStartError: The command cannot be run, the server exits or refuses
                ``initialize``, does not answer within ``start_timeout`` seconds, or does not
                offer ``cadenza.startSession``.
            ClientError: The ``events_path`` file cannot be opened.
        """
        if not self.root.is_dir():
            raise ServerStartError(f"the workspace {self.root} is not a folder")
        self._open_events()
        tracker = self._tracker = _Tracker()
        lsp = self._lsp = _LanguageClient(on_exit=self._server_exited)
        lsp.message_sink = self._events
        requests = ServerRequests(
            applier=WorkspaceEditApplier(self.root),
            prompter=self.prompter,
            publish=self._publish,
            on_change=tracker.changes.extend,
        )
        requests.register(lsp)
        await self._spawn(lsp)
        result = await self._initialize(lsp)
        encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
        requests.applier = WorkspaceEditApplier(self.root, position_encoding=encoding)
        lsp.initialized(types.InitializedParams())

    def _open_events(self) -> None:
        path = self.options.events_path
        if path is None or self._events is not None:
            return
        try:
            self._events = EventLog(path)
        except OSError as exc:
            raise ClientError(
                f"cannot write the events file {path}: {exc.strerror or exc}"
            ) from None

    async def _spawn(self, lsp: _LanguageClient) -> None:
        command = list(self.options.server_command)
        env = dict(self.options.env) if self.options.env is not None else None
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
            self._stderr_task = asyncio.create_task(self._drain_stderr(process.stderr))

    async def _initialize(self, lsp: _LanguageClient) -> types.InitializeResult:
        try:
            result = await asyncio.wait_for(
                lsp.initialize_async(self._initialize_params()), self.options.start_timeout
            )
        except TimeoutError:
            raise ServerStartError(
                f"the server did not answer initialize within {self.options.start_timeout:g} s"
                + await self._stderr_note()
            ) from None
        except JsonRpcException as exc:
            raise ServerStartError(f"the server refused initialize: {exc}") from None
        except RuntimeError:  # pygls fails pending requests this way when the server exits
            raise ServerStartError(
                "the server exited during start-up" + await self._stderr_note()
            ) from None
        commands = result.capabilities.execute_command_provider
        if commands is None or START_SESSION not in commands.commands:
            raise ServerStartError(f"the server does not offer the command {START_SESSION}")
        return result

    def _initialize_params(self) -> types.InitializeParams:
        options: dict[str, Any] = {}
        if self.options.max_steps is not None:
            options["maxSteps"] = self.options.max_steps
        return types.InitializeParams(
            process_id=os.getpid(),
            client_info=types.ClientInfo(name="cadenza-run", version=__version__),
            root_uri=self.root_uri,
            workspace_folders=[types.WorkspaceFolder(uri=self.root_uri, name=self.root.name)],
            initialization_options=options,
            capabilities=client_capabilities(),
        )

    async def start_session(self, task: str) -> str:
        """Send ``cadenza.startSession`` and return the session id (the run goes on).

        Raises:
            SessionStartError: The server answered with an error or a malformed result.
            ServerExitedError: The server exited before answering.
        """
        lsp, tracker = self._started()
        args = StartSessionArgs(
            task=task,
            root_uri=self.root_uri,
            model=self.options.model,
            workflow=self.options.workflow or DEFAULT_WORKFLOW,
            review=self.options.review,
            text_document=(
                DocumentIdentifier(uri=self.options.open_document.resolve().as_uri())
                if self.options.open_document is not None
                else None
            ),
        )
        params = types.ExecuteCommandParams(command=START_SESSION, arguments=[args.wire()])
        tracker.started = time.monotonic()
        try:
            raw = await lsp.workspace_execute_command_async(params)
        except JsonRpcException as exc:
            raise SessionStartError(f"the server refused the session: {exc}") from None
        except RuntimeError:
            raise ServerExitedError(
                "the server exited before starting the session" + await self._stderr_note()
            ) from None
        if not isinstance(raw, dict) or not isinstance(raw.get("sessionId"), str):
            raise SessionStartError(f"{START_SESSION} returned {raw!r}, not {{sessionId}}")
        tracker.session_id = StartSessionResult.model_validate(raw).session_id
        return tracker.session_id

    async def reply_session(self, session_id: str, text: str) -> None:
        """Resume a session that waits for the person with ``text`` (``cadenza.replySession``).

        The session may be from an earlier server (it is revived from its transcript); follow
        it with ``wait`` as after ``start_session``.

        Raises:
            SessionStartError: The server refused (unknown session, not waiting, ...).
            ServerExitedError: The server exited before answering.
        """
        lsp, tracker = self._started()
        params = types.ExecuteCommandParams(
            command=REPLY_SESSION, arguments=[{"sessionId": session_id, "text": text}]
        )
        tracker.started = time.monotonic()
        tracker.session_id = session_id
        try:
            await lsp.workspace_execute_command_async(params)
        except JsonRpcException as exc:
            raise SessionStartError(f"the server refused the reply: {exc}") from None
        except RuntimeError:
            raise ServerExitedError(
                "the server exited before taking the reply" + await self._stderr_note()
            ) from None

    async def wait(self) -> SessionOutcome:
        """Wait for ``session_end``.

        Raises:
            ServerExitedError: The server process ended first.
        """
        _, tracker = self._started()
        waiters: list[asyncio.Future[Any]] = [tracker.end, tracker.exited]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if not tracker.end.done():
            code = tracker.exited.result()
            raise ServerExitedError(
                f"the server exited (status {code}) before the session ended"
                + await self._stderr_note()
            )
        end = tracker.end.result()
        return SessionOutcome(
            session_id=tracker.session_id or "",
            stop_reason=end.stop_reason,
            message=end.message,
            steps=end.steps,
            changes=self.changes,
            wall_time=time.monotonic() - tracker.started,
            missing_info=end.missing_info,
            why_no_default=end.why_no_default,
        )

    async def cancel(self) -> bool:
        """Send ``cadenza.cancelSession``; True when the server was running the session.

        Raises:
            ClientError: The server answered with an error or is gone.
        """
        lsp, tracker = self._started()
        if tracker.session_id is None or tracker.exited.done():
            return False
        params = types.ExecuteCommandParams(
            command=CANCEL_SESSION, arguments=[{"sessionId": tracker.session_id}]
        )
        try:
            raw = await lsp.workspace_execute_command_async(params)
        except (JsonRpcException, RuntimeError) as exc:
            raise ClientError(f"cancelling the session failed: {exc}") from None
        return CancelSessionResult.model_validate(raw if isinstance(raw, dict) else {}).cancelled

    async def undo(self, session_id: str) -> UndoSessionResult:
        """Send ``cadenza.undoSession``: put back every file the session changed.

        The session may be from an earlier server (its checkpoint is kept in the server's state
        folder). The edit comes back as ``workspace/applyEdit`` and is written like any other.

        Raises:
            ClientError: The server refused (the message names the file and why) or is gone.
        """
        lsp, _ = self._started()
        params = types.ExecuteCommandParams(
            command=UNDO_SESSION, arguments=[{"sessionId": session_id}]
        )
        try:
            raw = await lsp.workspace_execute_command_async(params)
        except JsonRpcException as exc:
            raise ClientError(f"undo refused: {exc.message}") from None
        except RuntimeError:
            raise ServerExitedError("the server exited during the undo") from None
        return UndoSessionResult.model_validate(raw if isinstance(raw, dict) else {})

    async def close(self) -> None:
        """``shutdown`` then ``exit`` the server; terminate it if it lingers. Idempotent."""
        lsp, self._lsp = self._lsp, None
        if lsp is None:
            if self._events is not None:
                self._events.close()
            return
        process = lsp.process
        timeout = self.options.shutdown_timeout
        if process is not None and process.returncode is None:
            with contextlib.suppress(JsonRpcException, RuntimeError, TimeoutError):
                await asyncio.wait_for(lsp.shutdown_async(None), timeout)
                lsp.exit(None)
            await _reap(process, timeout)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(lsp.stop(), timeout)  # type: ignore[no-untyped-call]
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task
        if self._events is not None:
            self._events.close()

    def _started(self) -> tuple[_LanguageClient, _Tracker]:
        if self._lsp is None or self._tracker is None:
            raise ClientError("the client is not started")
        return self._lsp, self._tracker

    def _publish(self, event: ClientEvent) -> None:
        """Pass ``event`` on; resolve the session's end.

        After ``needs_user_input`` or ``waiting_human`` the server prompts the person: an
        answer resumes the session (the outcome is a later ``session_end``); a declined
        prompt, or none within ``PROMPT_GRACE_S``, makes the waiting end the outcome.
        """
        tracker = self._tracker
        if tracker is not None and not tracker.end.done():
            if isinstance(event, SessionEnd):
                if event.stop_reason in WAITING_STOP_REASONS:
                    tracker.waiting = event
                    tracker.grace = asyncio.get_running_loop().call_later(
                        PROMPT_GRACE_S, self._settle_waiting
                    )
                else:
                    tracker.end.set_result(event)
            elif isinstance(event, UserAsked) and tracker.waiting is not None:
                if tracker.grace is not None:
                    tracker.grace.cancel()
                if event.answer is None or event.answer == "Answer in the agent panel":
                    self._settle_waiting()
                else:
                    tracker.waiting = None  # it resumes; its next session_end counts
        self.observer(event)

    def _settle_waiting(self) -> None:
        tracker = self._tracker
        if tracker is not None and tracker.waiting is not None and not tracker.end.done():
            tracker.end.set_result(tracker.waiting)

    def _server_exited(self, code: int | None) -> None:
        if self._tracker is not None and not self._tracker.exited.done():
            self._tracker.exited.set_result(code)

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        """Read the server's stderr so it never blocks on a full pipe; keep the tail."""
        while line := await stream.readline():
            text = line.decode("utf-8", errors="replace").rstrip()
            self._stderr.append(text)
            if self.options.stderr_sink is not None:
                self.options.stderr_sink(text)

    async def _stderr_note(self) -> str:
        """``: <last stderr lines>`` once the pipe is drained (waits at most one second)."""
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        tail = [line for line in self._stderr if line.strip()][-12:]
        return (":\n" + "\n".join(tail)) if tail else ""


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
        # back in their own encoding (cadenza.client.text).
        experimental={"cadenza": {"askUser": True, "exactEncodings": True}},
    )


async def run_task(
    options: ClientOptions,
    task: str,
    *,
    observer: Observer = ignore_events,
    prompter: Prompter | None = None,
) -> SessionOutcome:
    """Start a server, run ``task`` to its end, shut the server down.

    Raises:
        ClientError: The server could not be started, refused the session, or exited early.
    """
    async with HeadlessClient(options, observer=observer, prompter=prompter) as client:
        await client.start_session(task)
        return await client.wait()
