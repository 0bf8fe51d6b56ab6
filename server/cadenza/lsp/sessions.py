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
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path, uri_scheme

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.engine.session import Session, SessionOutcome, SessionSettings
from cadenza.engine.workflows import Workflow, WorkflowError, load_catalog
from cadenza.lsp.capabilities import ClientFeatures
from cadenza.lsp.editor import LspEditor
from cadenza.lsp.params import InvalidArguments, StartSessionArgs, UndoSessionResult
from cadenza.lsp.progress import SessionProgress
from cadenza.lsp.publisher import SessionPublisher
from cadenza.lsp.transcripts import GuardedRecorder, open_transcript
from cadenza.lsp.undo import SessionUndo, UndoFailed
from cadenza.providers.base import Provider
from cadenza.providers.registry import create_provider, resolve_model_name
from cadenza.tools.checkpoints import CheckpointError, SessionCheckpoint
from cadenza.tools.registry import default_tools

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 5.0
"""Seconds to wait for cancelled sessions to finish on shutdown."""
ENDING_GRACE_S = 1.0
"""Seconds an undo waits for a session that is finishing (its end already published)."""


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


def _cancel(task: asyncio.Task[SessionOutcome]) -> None:
    task.cancel()


class SessionManager:
    """Running sessions by id, and the providers they share."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self.config = CadenzaConfig()
        self._tasks: dict[str, asyncio.Task[SessionOutcome]] = {}
        self._providers: dict[str, Provider] = {}
        self._ended: set[str] = set()
        """Sessions that ran and ended in this server run (undo reads their checkpoints)."""
        self.checkpoints_base: Path | None = None
        """Where checkpoints live (None: ``<user state dir>/checkpoints``)."""

    def start(self, args: StartSessionArgs, *, work_done_token: types.ProgressToken | None) -> str:
        """Create a session and start running it; return its id at once.

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
        checkpoint = SessionCheckpoint.for_session(session_id, root, self.checkpoints_base)
        editor = LspEditor(
            self._server,
            publisher,
            review=args.review or self.config.review,
            checkpoint=checkpoint,
        )
        recorder = open_transcript(
            session_id=session_id,
            task=args.task,
            root=root,
            workflow=workflow.name,
            model=model,
            warn=lambda text: _warn(publisher, text),
        )
        session = Session(
            session_id=session_id,
            task=args.task,
            root=root,
            provider=provider,
            editor=editor,
            tools=default_tools(),
            settings=self._settings(),
            workflow=workflow,
            recorder=recorder,
        )
        task = asyncio.create_task(
            self._run(session, publisher, work_done_token), name=f"cadenza-session-{session_id}"
        )
        self._tasks[session_id] = task
        task.add_done_callback(lambda done: self._finished(session_id, done, recorder))
        log.info(
            "session %s started on %s with %s, workflow %s",
            session_id,
            root,
            provider.name,
            workflow.name,
        )
        return session_id

    def cancel(self, session_id: str) -> bool:
        """Cancel a running session; False when no such session is running."""
        task = self._tasks.get(session_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def undo(self, session_id: str) -> UndoSessionResult:
        """Undo the changes of a session that is over (see ``undo``).

        The session may be from an earlier run of the server: its checkpoint is on disk.

        Raises:
            UndoFailed: The session is still running, unknown (no checkpoint), or its undo was
                refused (the message names the file and why).
        """
        task = self._tasks.get(session_id)
        if task is not None and not task.done():
            # Its session_end may be out already while the task winds down.
            await asyncio.wait({task}, timeout=ENDING_GRACE_S)
        if session_id in self._tasks and not self._tasks[session_id].done():
            raise UndoFailed(
                f"session {session_id} is still running; cancel it (cadenza.cancelSession) "
                "before undoing it"
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

    def _settings(self) -> SessionSettings:
        config = self.config
        return SessionSettings(
            max_steps=config.max_steps,
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            context_size=config.context_size,
        )

    def _provider(self, model: str) -> Provider:
        provider = self._providers.get(model)
        if provider is None:
            try:
                provider = create_provider(model, self.config)
            except ConfigError as exc:
                raise InvalidArguments(str(exc)) from None
            self._providers[model] = provider
        return provider

    async def _run(
        self,
        session: Session,
        publisher: SessionPublisher,
        work_done_token: types.ProgressToken | None,
    ) -> SessionOutcome:
        """Open the progress, then run the session (which publishes its own end)."""
        task = asyncio.current_task()
        try:
            publisher.progress = await SessionProgress.open(
                self._server,
                client_token=work_done_token,
                may_create=ClientFeatures.of(self._server.client_capabilities).work_done_progress,
                message=session.task,
            )
        except asyncio.CancelledError:
            session.end_before_start()  # the transcript records the end too
            raise
        if publisher.progress is not None and task is not None:
            publisher.progress.on_cancel(lambda: _cancel(task))
        return await session.run()

    def _finished(
        self,
        session_id: str,
        task: asyncio.Task[SessionOutcome],
        recorder: GuardedRecorder | None,
    ) -> None:
        """Done-callback: close the transcript, forget the task and log how it ended.

        A done-callback rather than a ``finally`` in the task: it also runs for a task
        cancelled before its first step (e.g. on ``shutdown``).
        """
        if recorder is not None:
            recorder.close()
        self._tasks.pop(session_id, None)
        self._ended.add(session_id)
        if task.cancelled():
            log.info("session %s cancelled", session_id)
        elif (exc := task.exception()) is not None:
            log.error("session %s failed", session_id, exc_info=exc)
        else:
            log.info("session %s ended: %s", session_id, task.result().stop_reason)

    async def aclose(self) -> None:
        """Cancel every session, wait briefly for them, and close every provider."""
        tasks = list(self._tasks.values())
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
