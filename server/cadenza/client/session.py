"""The headless client: spawn ``cadenza serve``, run one agent session, report how it ended.

It speaks to the server over the server's stdio (:mod:`cadenza.client.connection`) and serves
the server's requests: edits are written to disk by
:class:`~cadenza.client.edits.WorkspaceEditApplier`, questions go to a
:class:`~cadenza.client.prompts.Prompter`. Everything else is handed to an observer; the run's
end is decided by :class:`~cadenza.client.outcome.RunTracker`.

Typical use::

    async with HeadlessClient(ClientOptions(workspace=Path("."))) as client:
        await client.start_session("rename foo to bar")
        result = await client.wait()
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from cadenza.client.connection import (
    ServerLanguageClient,
    StderrTail,
    initialize,
    initialize_params,
    shut_down,
    spawn,
)
from cadenza.client.edits import FileChange, WorkspaceEditApplier
from cadenza.client.errors import (
    ClientError,
    ServerExitedError,
    ServerStartError,
    SessionStartError,
    rpc_message,
)
from cadenza.client.eventlog import EventLog
from cadenza.client.events import ClientEvent, Observer, ignore_events
from cadenza.client.handlers import ServerRequests
from cadenza.client.options import ClientOptions
from cadenza.client.outcome import RunResult, RunTracker
from cadenza.client.prompts import DecliningPrompter, Prompter
from cadenza.client.snapshot import DiskSnapshot, reconcile
from cadenza.client.summary import merge_changes
from cadenza.schema.commands import (
    DEFAULT_WORKFLOW,
    CancelSessionResult,
    ConfigureSessionArgs,
    DocumentIdentifier,
    PromptSessionArgs,
    StartSessionArgs,
    StartSessionResult,
    UndoSessionResult,
)
from cadenza.schema.methods import (
    CANCEL_SESSION,
    CONFIGURE_SESSION,
    PROMPT_SESSION,
    REPLY_SESSION,
    START_SESSION,
    UNDO_SESSION,
)


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
        self._tracker: RunTracker | None = None
        self._lsp: ServerLanguageClient | None = None
        self._stderr = StderrTail(options.stderr_sink)
        self._events: EventLog | None = None
        self._snapshot: DiskSnapshot | None = None
        self.position_encoding: str = types.PositionEncodingKind.Utf16
        """The position encoding the server chose in ``initialize``."""

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
        return "\n".join(self._stderr.lines)

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
        tracker = self._tracker = RunTracker()
        lsp = self._lsp = ServerLanguageClient(on_exit=tracker.server_exited)
        lsp.message_sink = self._events
        requests = ServerRequests(
            applier=WorkspaceEditApplier(self.root),
            prompter=self.prompter,
            publish=self._publish,
            on_change=tracker.changes.extend,
        )
        requests.register(lsp)
        await spawn(lsp, self.options, self._stderr)
        result = await initialize(
            lsp,
            initialize_params(self.root, self.options.max_steps, self.options.time_budget_s),
            timeout=self.options.start_timeout,
            stderr=self._stderr,
        )
        encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
        requests.applier = WorkspaceEditApplier(self.root, position_encoding=encoding)
        self.position_encoding = encoding
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
        await self._note_disk()
        tracker.begin()
        try:
            raw = await lsp.workspace_execute_command_async(params)
        except JsonRpcException as exc:
            raise SessionStartError(f"cannot start the session: {rpc_message(exc)}") from None
        except RuntimeError:
            raise ServerExitedError(
                "the server exited before starting the session" + await self._stderr.note()
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
        arguments = {"sessionId": session_id, "text": text}
        await self._go_on(session_id, REPLY_SESSION, arguments, "the reply")

    async def prompt_session(
        self,
        session_id: str,
        text: str,
        *,
        model: str | None = None,
        workflow: str | None = None,
    ) -> None:
        """The next turn of a session whose turn ended (``cadenza.promptSession``).

        It goes on in the same conversation, also for a session of an earlier server; a
        session that waits for the person takes ``text`` as its answer. ``model`` and
        ``workflow`` (``cadenza.configureSession``) apply from this turn on. Follow it with
        ``wait`` as after ``start_session``.

        Raises:
            SessionStartError: The server refused (unknown session, running, unknown model...).
            ServerExitedError: The server exited before answering.
        """
        if model is not None or workflow is not None:
            choice = ConfigureSessionArgs(session_id=session_id, model=model, workflow=workflow)
            await self._command(CONFIGURE_SESSION, choice.wire(), f"to continue {session_id}")
        args = PromptSessionArgs(session_id=session_id, text=text)
        await self._go_on(session_id, PROMPT_SESSION, args.wire(), "the prompt")

    async def _go_on(
        self, session_id: str, command: str, arguments: dict[str, Any], what: str
    ) -> None:
        _, tracker = self._started()
        await self._note_disk()
        tracker.begin(session_id)
        await self._command(command, arguments, what)

    async def _command(self, command: str, arguments: dict[str, Any], what: str) -> Any:
        lsp, _ = self._started()
        params = types.ExecuteCommandParams(command=command, arguments=[arguments])
        try:
            return await lsp.workspace_execute_command_async(params)
        except JsonRpcException as exc:
            raise SessionStartError(f"the server refused {what}: {rpc_message(exc)}") from None
        except RuntimeError:
            raise ServerExitedError(
                f"the server exited before taking {what}" + await self._stderr.note()
            ) from None

    async def wait(self) -> RunResult:
        """Wait for ``session_end``.

        Raises:
            ServerExitedError: The server process ended first.
        """
        _, tracker = self._started()
        if not await tracker.ended():
            code = tracker.exited.result()
            raise ServerExitedError(
                f"the server exited (status {code}) before the session ended"
                + await self._stderr.note()
            )
        result = tracker.result()
        return replace(result, changes=await self.final_changes())

    async def _note_disk(self) -> None:
        """Note the workspace as the run begins, to find the changes commands make."""
        self._snapshot = await asyncio.to_thread(DiskSnapshot.take, self.root)

    async def final_changes(self) -> tuple[FileChange, ...]:
        """The run's changes so far: the edits written, and the other files it changed.

        A file a command of the agent changed or created is here too, as the disk has it
        (:mod:`cadenza.client.snapshot`); a file only another session or the person changed
        is not. Without a noted start, only the edits.
        """
        edits = self.changes
        snapshot, tracker = self._snapshot, self._tracker
        if snapshot is None or tracker is None:
            return edits
        touched = self._relative(tracker.touched) | {e.path for e in edits}
        rewritten = self._relative(tracker.rewritten)
        return await asyncio.to_thread(
            lambda: reconcile(self.root, edits, snapshot.changes(only=touched), rewritten)
        )

    def _relative(self, paths: set[str]) -> set[str]:
        """The workspace-relative form of the absolute ``paths`` under the root."""
        relative = set()
        for path in paths:
            with contextlib.suppress(ValueError):
                relative.add(Path(path).relative_to(self.root).as_posix())
        return relative

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
            raise ClientError(f"undo refused: {rpc_message(exc)}") from None
        except RuntimeError:
            raise ServerExitedError("the server exited during the undo") from None
        return UndoSessionResult.model_validate(raw if isinstance(raw, dict) else {})

    async def inline_completion(self, path: Path, text: str, position: types.Position) -> str:
        """Open ``path`` with ``text`` and ask ``textDocument/inlineCompletion`` at ``position``.

        ``position`` is in ``position_encoding`` units. Returns the first item's text, or "".

        Raises:
            ClientError: The server refused the request or is gone.
        """
        lsp, _ = self._started()
        uri: str = from_fs_path(str(path))
        document = types.TextDocumentItem(uri=uri, language_id="", version=1, text=text)
        lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=document))
        params = types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position,
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
        )
        try:
            result = await lsp.text_document_inline_completion_async(params)
        except JsonRpcException as exc:
            raise ClientError(f"the completion was refused: {rpc_message(exc)}") from None
        except RuntimeError:
            raise ServerExitedError("the server exited during the completion") from None
        items = result.items if isinstance(result, types.InlineCompletionList) else result or []
        first = items[0].insert_text if items else ""
        return first if isinstance(first, str) else first.value

    async def close(self) -> None:
        """``shutdown`` then ``exit`` the server; terminate it if it lingers. Idempotent."""
        lsp, self._lsp = self._lsp, None
        if lsp is not None:
            await shut_down(lsp, self.options.shutdown_timeout)
            await self._stderr.stop()
        if self._events is not None:
            self._events.close()

    def _started(self) -> tuple[ServerLanguageClient, RunTracker]:
        if self._lsp is None or self._tracker is None:
            raise ClientError("the client is not started")
        return self._lsp, self._tracker

    def _publish(self, event: ClientEvent) -> None:
        """Let the tracker see ``event`` (it may end the run), then pass it on."""
        if self._tracker is not None:
            self._tracker.see(event)
        self.observer(event)


async def run_task(
    options: ClientOptions,
    task: str,
    *,
    observer: Observer = ignore_events,
    prompter: Prompter | None = None,
) -> RunResult:
    """Start a server, run ``task`` to its end, shut the server down.

    Raises:
        ClientError: The server could not be started, refused the session, or exited early.
    """
    async with HeadlessClient(options, observer=observer, prompter=prompter) as client:
        await client.start_session(task)
        return await client.wait()
