"""The session manager: starts sessions as tracked tasks, cancels them, owns the providers.

A session runs as an asyncio task whose failures are logged in a done-callback (esbonio's
``run_task``), so ``cadenza.startSession`` answers at once. Before it starts, the workflow is
looked up in the catalog of the session's root (built-ins, the user's and the workspace's
``.cadenza/workflows/*.toml``, read afresh for each session so edits apply at once; a broken
file only matters to a session that asks for it) and the transcript is opened. Providers are
created once per model name and shared by the sessions that use it (the ``local`` provider
owns a ``llama-server`` process); all are closed on ``shutdown``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path, uri_scheme

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.engine.permissions import PermissionGate, PermissionStore
from cadenza.engine.restore import NotRestorable, RestoredState, restore_state
from cadenza.engine.session import WAITING, Session, SessionOutcome
from cadenza.engine.session_lock import SessionLock, SessionLocked
from cadenza.engine.transcript import (
    SessionSummary,
    TranscriptError,
    TranscriptRecord,
    list_sessions,
    read_transcript,
    summary_of,
    transcript_path,
)
from cadenza.engine.workflows import Workflow, WorkflowError, load_catalog
from cadenza.lsp.editor import LspEditor
from cadenza.lsp.live import LiveSession, SessionDriver
from cadenza.lsp.params import InvalidArguments
from cadenza.lsp.publisher import SessionPublisher
from cadenza.lsp.replay import replay_updates
from cadenza.lsp.review import ReviewMode
from cadenza.lsp.transcripts import GuardedRecorder, open_transcript, reopen_transcript
from cadenza.lsp.undo import SessionUndo, UndoFailed
from cadenza.providers.base import Provider
from cadenza.providers.registry import create_provider, resolve_model_name
from cadenza.schema.commands import (
    DocumentIdentifier,
    ListSessionsResult,
    LoadSessionResult,
    ReplySessionResult,
    SessionInfo,
    StartSessionArgs,
    UndoSessionResult,
)
from cadenza.schema.methods import SESSION_UPDATE
from cadenza.schema.updates import SessionUpdateParams
from cadenza.session_settings import session_settings
from cadenza.tools.checkpoints import CheckpointError, SessionCheckpoint
from cadenza.tools.registry import default_tools

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 5.0
"""Seconds to wait for cancelled sessions to finish on shutdown."""
ENDING_GRACE_S = 1.0
"""Seconds an undo waits for a session that is finishing (its end already published)."""


class SessionRequestFailed(Exception):
    """A session command cannot be done (unknown session, not waiting...).

    The server answers with JSON-RPC error -32803 (``RequestFailed``, LSP 3.17) and this message.
    """


def _document_path(document: DocumentIdentifier | None) -> Path | None:
    """The file of a ``file:`` URI, or None (priming checks it is inside the workspace)."""
    if document is None or uri_scheme(document.uri) != "file":
        return None
    fs_path = to_fs_path(document.uri)
    return Path(fs_path) if fs_path else None


def folder_of(uri: str) -> Path:
    """The existing local folder named by a ``file:`` URI.

    Raises:
        InvalidArguments: Not a ``file:`` URI, or not an existing folder.
    """
    if uri_scheme(uri) != "file":
        raise InvalidArguments(f"rootUri must be a file: URI, got {uri!r}")
    fs_path = to_fs_path(uri)
    if fs_path is None or not Path(fs_path).is_dir():
        raise InvalidArguments(f"rootUri {uri!r} is not an existing folder")
    return Path(fs_path).resolve()


class SessionManager:
    """Live sessions by id, the stored ones, and the providers they share."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self.config = CadenzaConfig()
        self._live: dict[str, LiveSession] = {}
        self._driver = SessionDriver(server)
        self._providers: dict[str, Provider] = {}
        self._ended: set[str] = set()
        """Sessions that ran and ended in this server run (undo reads their checkpoints)."""
        self._by_request: dict[int | str, str] = {}
        """``cadenza.startSession`` request id → session id, for ``$/cancelRequest``."""
        self.checkpoints_base: Path | None = None
        """Where checkpoints live (None: ``<user state dir>/checkpoints``)."""

    def start(
        self,
        args: StartSessionArgs,
        *,
        work_done_token: types.ProgressToken | None,
        request_id: int | str | None = None,
    ) -> str:
        """Create a session and start running it; return its id at once.

        Args:
            args: The command's arguments.
            work_done_token: The client's progress token for the first run, if any.
            request_id: The ``cadenza.startSession`` request's id: a ``$/cancelRequest`` for
                it cancels the session, even after the id was answered.

        Raises:
            InvalidArguments: No usable workspace folder; an unknown or invalid workflow (the
                message names the file and the field); or the model is malformed or names an
                unknown provider.
        """
        root = self._root(args.root_uri)
        workflow = self._workflow(root, args.workflow)
        model = resolve_model_name(args.model, self.config)
        provider = self._provider(model)
        session_id = uuid.uuid4().hex
        publisher = SessionPublisher(self._server, session_id=session_id, root=root)
        recorder = open_transcript(
            session_id=session_id,
            task=args.task,
            root=root,
            workflow=workflow.name,
            model=model,
            warn=lambda text: _warn(publisher, text),
        )
        live = self._live_session(
            session_id=session_id,
            task=args.task,
            root=root,
            model=model,
            provider=provider,
            workflow=workflow,
            publisher=publisher,
            recorder=recorder,
            review=args.review,
            open_document=_document_path(args.text_document),
        )
        try:
            live.lock = SessionLock.acquire(session_id)
        except SessionLocked:  # a fresh id: cannot be held elsewhere
            log.warning("session %s: its lock is held elsewhere", session_id)
        if request_id is not None:
            self._by_request[request_id] = session_id
        self._launch(live, self._driver.drive(live, work_done_token=work_done_token))
        log.info(
            "session %s started on %s with %s, workflow %s",
            session_id,
            root,
            provider.name,
            workflow.name,
        )
        return session_id

    def _live_session(
        self,
        *,
        session_id: str,
        task: str,
        root: Path,
        model: str,
        provider: Provider,
        workflow: Workflow,
        publisher: SessionPublisher,
        recorder: GuardedRecorder | None,
        review: ReviewMode | None = None,
        restored: RestoredState | None = None,
        open_document: Path | None = None,
    ) -> LiveSession:
        """Wire an engine session to this client: editor, checkpoint, permissions, transcript."""
        checkpoint = self._checkpoint(session_id, root, revived=restored is not None)
        editor = LspEditor(
            self._server,
            publisher,
            review=review or self.config.review,
            checkpoint=checkpoint,
        )
        settings = session_settings(self.config, model)
        gate = PermissionGate(
            editor,
            store=PermissionStore(root),
            gated=settings.gated_tools,
            timeout_s=settings.permission_timeout_s,
        )
        session = Session(
            session_id=session_id,
            task=task,
            root=root,
            provider=provider,
            editor=editor,
            tools=default_tools(self.config.browser),
            settings=settings,
            workflow=workflow,
            recorder=recorder,
            permissions=gate,
            history=restored.history if restored is not None else None,
            last=restored.last if restored is not None else None,
            open_document=open_document,
        )
        if restored is not None:
            session.restore_steps(restored.steps)
        return LiveSession(
            session=session, publisher=publisher, recorder=recorder, root=root, model=model
        )

    def _checkpoint(self, session_id: str, root: Path, *, revived: bool) -> SessionCheckpoint:
        """The session's checkpoint (a revived session keeps its stored one).

        So an undo after a restart still puts back what was changed before it.
        """
        if revived:
            try:
                stored = SessionCheckpoint.load(session_id, self.checkpoints_base)
            except CheckpointError as exc:
                log.warning("session %s: its checkpoint is unreadable: %s", session_id, exc)
                stored = None
            if stored is not None:
                return stored
        return SessionCheckpoint.for_session(session_id, root, self.checkpoints_base)

    def _launch(self, live: LiveSession, drive: Coroutine[Any, Any, SessionOutcome]) -> None:
        """Run ``drive`` as the session's task; forget the session when it is over.

        With MCP servers configured, the task connects them first (their tools join the
        session's; a server that fails is a warning in the session log).
        """
        session_id = live.session_id
        mcp = self.config.mcp
        if mcp.servers:
            from cadenza.mcp.client import connect_then  # the MCP SDK loads only when used

            drive = connect_then(
                live.session, mcp, mcp.servers, lambda text: _warn(live.publisher, text), drive
            )
        task = asyncio.create_task(drive, name=f"cadenza-session-{session_id}")
        live.task = task
        self._live[session_id] = live
        task.add_done_callback(lambda done: self._finished(session_id, done))

    def cancel(self, session_id: str) -> bool:
        """Cancel a running or waiting session; False when no such session is live."""
        live = self._live.get(session_id)
        return live is not None and live.cancel()

    def cancel_request(self, request_id: int | str) -> None:
        """``$/cancelRequest`` for a ``cadenza.startSession`` request: cancel its session."""
        session_id = self._by_request.pop(request_id, None)
        if session_id is not None and self.cancel(session_id):
            log.info("session %s cancelled by $/cancelRequest %s", session_id, request_id)

    def reply(self, session_id: str, text: str) -> ReplySessionResult:
        """Resume a session that waits for the person with ``text`` (``cadenza.replySession``).

        A stored session (e.g. from before a restart) that waits is revived from its
        transcript and resumed.

        Raises:
            SessionRequestFailed: The session is running, over, or unknown.
        """
        live = self._live.get(session_id)
        if not text.strip() and self._waits_for_answer(session_id, live):
            raise SessionRequestFailed(
                f"session {session_id} asked a question: the answer must not be blank"
            )
        if live is not None:
            if live.give_reply(text):
                return ReplySessionResult(resumed=True, state="running")
            raise SessionRequestFailed(
                f"session {session_id} is {live.state}, not waiting for a reply"
            )
        restored, start = self._stored_waiting(session_id)
        live = self._revive(session_id, restored, start)
        self._launch(live, self._driver.drive(live, reply=text))
        return ReplySessionResult(resumed=True, state="running")

    def _waits_for_answer(self, session_id: str, live: LiveSession | None) -> bool:
        """Whether the session waits for an answer to a question (not a browser action)."""
        if live is not None:
            return live.state == "needs_user_input"
        try:
            records = self._records(session_id)
        except SessionRequestFailed:
            return False
        return self._summary(session_id, records).state == "needs_user_input"

    def _stored_waiting(self, session_id: str) -> tuple[RestoredState, SessionSummary]:
        """A stored session that waits for the person, rebuilt from its transcript.

        Raises:
            SessionRequestFailed: Unknown, unreadable, or not waiting.
        """
        records = self._records(session_id)
        summary = self._summary(session_id, records)
        if summary.state not in WAITING:
            raise SessionRequestFailed(
                f"session {session_id} is {summary.state}, not waiting for a reply"
            )
        try:
            return restore_state(records), summary
        except NotRestorable as exc:
            raise SessionRequestFailed(f"session {session_id} cannot go on: {exc}") from None

    @staticmethod
    def _summary(session_id: str, records: list[TranscriptRecord]) -> SessionSummary:
        try:
            return summary_of(session_id, records)
        except TranscriptError as exc:
            raise SessionRequestFailed(str(exc)) from None

    def _records(self, session_id: str) -> list[TranscriptRecord]:
        try:
            return read_transcript(transcript_path(session_id))
        except ValueError:  # an unsafe id, or a damaged transcript
            raise SessionRequestFailed(f"no readable session {session_id!r}") from None
        except FileNotFoundError:
            raise SessionRequestFailed(f"unknown session {session_id!r}") from None
        except OSError as exc:
            raise SessionRequestFailed(f"session {session_id}: {exc}") from None

    def _revive(
        self, session_id: str, restored: RestoredState, summary: SessionSummary
    ) -> LiveSession:
        """A live session from a stored one (its transcript appended to)."""
        root = Path(restored.start.root)
        if not root.is_dir():
            raise SessionRequestFailed(f"session {session_id}: its folder {root} is gone")
        try:
            workflow = self._workflow(root, summary.workflow)
            provider = self._provider(summary.model)
        except InvalidArguments as exc:
            raise SessionRequestFailed(f"session {session_id} cannot go on: {exc}") from None
        try:
            lock = SessionLock.acquire(session_id)
        except (SessionLocked, ValueError) as exc:
            raise SessionRequestFailed(str(exc)) from None
        publisher = SessionPublisher(self._server, session_id=session_id, root=root)
        recorder = reopen_transcript(session_id, lambda text: _warn(publisher, text))
        live = self._live_session(
            session_id=session_id,
            task=summary.task,
            root=root,
            model=summary.model,
            provider=provider,
            workflow=workflow,
            publisher=publisher,
            recorder=recorder,
            restored=restored,
        )
        live.started = summary.started
        live.lock = lock
        return live

    def _revive_waiting(
        self, session_id: str, records: list[TranscriptRecord], summary: SessionSummary
    ) -> LiveSession | None:
        """Revive a stored waiting session: it prompts again and takes a reply."""
        try:
            restored = restore_state(records)
            if restored.last is None or not restored.last.waiting:
                raise NotRestorable("its transcript does not end waiting")
            live = self._revive(session_id, restored, summary)
        except (NotRestorable, SessionRequestFailed) as exc:
            log.warning("session %s stays stored: %s", session_id, exc)
            return None
        live.outcome, live.state = restored.last, restored.last.stop_reason
        self._launch(live, self._driver.drive(live, waiting=restored.last))
        return live

    def list(self) -> ListSessionsResult:
        """Every stored session, newest first (live ones with their current state)."""
        live = {sid: s for sid, s in self._live.items()}
        infos = []
        for summary in list_sessions(live=[sid for sid, s in live.items() if not s.waiting]):
            infos.append(self._info(summary, live.get(summary.session_id)))
        return ListSessionsResult(sessions=infos)

    def _info(self, summary: SessionSummary, live: LiveSession | None) -> SessionInfo:
        state = live.state if live is not None else summary.state
        question = None
        if live is not None and live.waiting and live.outcome is not None:
            question = live.outcome.missing_info or live.outcome.message
        elif state in WAITING and summary.last_message:
            question = summary.last_message
        return SessionInfo(
            session_id=summary.session_id,
            task=summary.task,
            state=state,
            started=summary.started.isoformat(),
            workflow=summary.workflow,
            model=summary.model,
            root=summary.root,
            question=question,
        )

    def load(self, session_id: str) -> LoadSessionResult:
        """Replay a stored session's history as ``cadenza/sessionUpdate`` notifications.

        The notifications are sent before this returns. A stored session that waits for
        the person is revived: it asks again, and ``cadenza.replySession`` resumes it.

        Raises:
            SessionRequestFailed: Unknown or unreadable.
        """
        records = self._records(session_id)
        summary = self._summary(session_id, records)
        root = Path(summary.root)
        updates = replay_updates(records, root)
        for update in updates:
            params = SessionUpdateParams(session_id=session_id, update=update)
            self._server.protocol.notify(SESSION_UPDATE, params.wire())
        live = self._live.get(session_id)
        if live is None and summary.state in WAITING:
            live = self._revive_waiting(session_id, records, summary)
        return LoadSessionResult(session=self._info(summary, live), updates=len(updates))

    async def undo(self, session_id: str) -> UndoSessionResult:
        """Undo the changes of a session that is over (see ``undo``).

        The session may be from an earlier run of the server: its checkpoint is on disk.

        Raises:
            UndoFailed: The session is still running, unknown (no checkpoint), or its undo was
                refused (the message names the file and why).
        """
        live = self._live.get(session_id)
        if live is not None and live.task is not None and not live.waiting:
            # Its session_end may be out already while the task winds down.
            await asyncio.wait({live.task}, timeout=ENDING_GRACE_S)
        if session_id in self._live:
            raise UndoFailed(
                f"session {session_id} is still {self._live[session_id].state}; cancel it "
                "(cadenza.cancelSession) before undoing it"
            )
        try:
            checkpoint = SessionCheckpoint.load(session_id, self.checkpoints_base)
        except CheckpointError as exc:
            raise UndoFailed(str(exc)) from None
        if checkpoint is None:
            if session_id in self._ended:  # it changed no file
                return UndoSessionResult(session_id=session_id, files=[], unchanged=[])
            raise UndoFailed(
                f"Cadenza has no record of session {session_id}: it changed no file, or its "
                "checkpoint was removed"
            )
        return await SessionUndo(self._server, checkpoint).run()

    def _root(self, root_uri: str | None) -> Path:
        if root_uri is not None:
            return folder_of(root_uri)
        workspace = self._server.workspace
        for folder in workspace.folders.values():
            return folder_of(folder.uri)
        if workspace.root_uri:
            return folder_of(workspace.root_uri)
        raise InvalidArguments("no rootUri given and the client opened no workspace folder")

    def _workflow(self, root: Path, name: str) -> Workflow:
        """The workflow called ``name`` in the catalog of ``root``.

        Raises:
            InvalidArguments: Unknown, or its file is invalid (the message names the file and
                the field).
        """
        catalog = load_catalog(root, known_tools=frozenset(default_tools().names))
        for problem in catalog.errors.values():
            log.warning("skipping a workflow file: %s", problem)
        try:
            return catalog.get(name)
        except WorkflowError as exc:
            raise InvalidArguments(str(exc)) from None

    def _provider(self, model: str) -> Provider:
        provider = self._providers.get(model)
        if provider is None:
            try:
                provider = create_provider(model, self.config)
            except ConfigError as exc:
                raise InvalidArguments(str(exc)) from None
            self._providers[model] = provider
        return provider

    def _finished(self, session_id: str, task: asyncio.Task[SessionOutcome]) -> None:
        """Done-callback: forget the session and log how it ended.

        A done-callback rather than a ``finally`` in the task: it also runs for a task
        cancelled before its first step (e.g. on ``shutdown``).
        """
        live = self._live.pop(session_id, None)
        if live is not None:
            if live.recorder is not None:
                live.recorder.close()
            if live.lock is not None:
                live.lock.release()
        self._ended.add(session_id)
        if task.cancelled():
            log.info("session %s cancelled", session_id)
        elif (exc := task.exception()) is not None:
            log.error("session %s failed", session_id, exc_info=exc)
        else:
            log.info("session %s ended: %s", session_id, task.result().stop_reason)

    async def aclose(self) -> None:
        """Cancel every session, wait briefly for them, and close every provider."""
        tasks = [live.task for live in self._live.values() if live.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
        providers = list(self._providers.values())
        self._providers.clear()
        for provider in providers:
            try:
                await provider.aclose()
            except Exception:
                log.exception("closing provider %s failed", provider.name)


def _warn(publisher: SessionPublisher, text: str) -> None:
    """A problem that does not stop the session: the server log and the session log."""
    log.warning("session %s: %s", publisher.session_id, text)
    publisher.log(text, types.MessageType.Warning)
