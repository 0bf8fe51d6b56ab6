"""The LSP face of the session host: ``cadenza.*Session`` commands in, sessions out.

The host makes, drives and revives sessions (``cadenza.host``); this module only translates:
a command's arguments into a ``SessionPlan`` (the workspace folder from ``rootUri`` or the
client's folders), host errors into the JSON-RPC errors the server answers with, and stored
sessions into ``SessionInfo`` and replayed ``cadenza/sessionUpdate`` notifications. A session
runs as a tracked task, so ``cadenza.startSession`` answers at once.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from cadenza.config import CadenzaConfig
from cadenza.engine.session_list import SessionSummary, list_sessions
from cadenza.engine.transcript import TranscriptRecord
from cadenza.host import stored
from cadenza.host.build import (
    SessionPlan,
    build_session,
    find_workflow,
    open_checkpoint,
    open_recorder,
    workflow_catalog,
)
from cadenza.host.choices import SessionChoices
from cadenza.host.driver import RESOURCE_CLOSE_S, drive
from cadenza.host.errors import SetupError, Unavailable
from cadenza.host.live import LiveSessions
from cadenza.host.lock import SessionLock, SessionLocked
from cadenza.host.mcp import connect_then
from cadenza.host.providers import ProviderPool
from cadenza.host.restore import RestoredState
from cadenza.host.turn_changes import next_turn
from cadenza.lsp.editor import LspEditor
from cadenza.lsp.followups import expanded_prompt
from cadenza.lsp.live import LspLive, LspPerson
from cadenza.lsp.params import InvalidArguments, document_path, workspace_root
from cadenza.lsp.publisher import SessionPublisher
from cadenza.lsp.replay import replay_updates, session_info
from cadenza.lsp.review import ReviewMode
from cadenza.lsp.undo import undo_session
from cadenza.providers.registry import resolve_model_name
from cadenza.schema.commands import (
    ConfigureSessionArgs,
    ConfigureSessionResult,
    ListSessionsResult,
    LoadSessionResult,
    PromptSessionArgs,
    ReplySessionResult,
    StartSessionArgs,
    UndoSessionResult,
)
from cadenza.schema.methods import SESSION_UPDATE
from cadenza.schema.outcome import WAITING, SessionOutcome
from cadenza.schema.updates import SessionUpdateParams
from cadenza.tools.registry import default_tools

log = logging.getLogger(__name__)


class SessionRequestFailed(Exception):
    """A session command cannot be done (unknown session, not waiting...).

    The server answers with JSON-RPC error -32803 (``RequestFailed``, LSP 3.17) and this message.
    """


class SessionManager:
    """Live sessions by id, the stored ones, and the providers they share."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self.config = CadenzaConfig()
        self.live: LiveSessions[SessionPublisher] = LiveSessions()
        self.providers = ProviderPool()
        self._by_request: dict[int | str, str] = {}
        """``cadenza.startSession`` request id → session id, for ``$/cancelRequest``."""
        self.checkpoints_base: Path | None = None
        """Where checkpoints live (None: ``<user state dir>/checkpoints``)."""
        self.choices = SessionChoices()
        """The model and workflow of sessions' next turns (``cadenza.configureSession``)."""

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
        root = workspace_root(self._server.workspace, args.root_uri)
        expanded = expanded_prompt(self._server.workspace, root, args.task, args.context)
        try:
            workflow = find_workflow(workflow_catalog(root), expanded.workflow or args.workflow)
            model = resolve_model_name(args.model, self.config)
            self.providers.get(model, self.config)
        except SetupError as exc:
            raise InvalidArguments(str(exc)) from None
        plan = SessionPlan(
            session_id=uuid.uuid4().hex,
            task=expanded.text,
            root=root,
            model=model,
            workflow=workflow,
            open_document=document_path(args.text_document),
        )
        live = self._live_session(plan, review=args.review)
        _said(live, args.task)
        try:
            live.lock = SessionLock.acquire(plan.session_id)
        except SessionLocked:  # a fresh id: cannot be held elsewhere
            log.warning("session %s: its lock is held elsewhere", plan.session_id)
        if request_id is not None:
            self._by_request[request_id] = plan.session_id
        self._launch(live, drive(live, LspPerson(self._server, work_done_token, message=args.task)))
        log.info("session %s started with %s, workflow %s", plan.session_id, model, workflow.name)
        return plan.session_id

    def _live_session(self, plan: SessionPlan, review: ReviewMode | None = None) -> LspLive:
        """Wire a host session to this client: publisher, editor, transcript, engine."""
        publisher = SessionPublisher(
            self._server, session_id=plan.session_id, root=plan.root, model=plan.model
        )
        recorder = open_recorder(plan, lambda text: _warn(publisher, text))
        revived = plan.restored is not None
        checkpoint = open_checkpoint(
            plan.session_id, plan.root, revived=revived, base=self.checkpoints_base
        )
        editor = LspEditor(
            self._server, publisher, review=review or self.config.review, checkpoint=checkpoint
        )
        session, _gate = build_session(
            plan,
            config=self.config,
            provider=self.providers.get(plan.model, self.config),
            editor=editor,
            tools=default_tools(self.config.browser),
            recorder=recorder,
            checkpoint=checkpoint,
        )
        return LspLive(
            session=session, face=publisher, recorder=recorder, root=plan.root, model=plan.model
        )

    def _launch(self, live: LspLive, run: Coroutine[Any, Any, SessionOutcome]) -> None:
        """Run the session's drive as its task; with MCP servers, connect them first."""
        mcp = self.config.mcp
        if mcp.servers:
            run = connect_then(
                live.session, mcp, mcp.servers, lambda text: _warn(live.face, text), run
            )
        self.live.launch(live, run)

    def cancel(self, session_id: str) -> bool:
        """Cancel a running or waiting session; False when no such session is live."""
        return self.live.cancel(session_id)

    def cancel_request(self, request_id: int | str) -> None:
        """``$/cancelRequest`` for a ``cadenza.startSession`` request: cancel its session."""
        session_id = self._by_request.pop(request_id, None)
        if session_id is not None and self.cancel(session_id):
            log.info("session %s cancelled by $/cancelRequest %s", session_id, request_id)

    def reply(self, session_id: str, text: str, said: str | None = None) -> ReplySessionResult:
        """Resume a session that waits for the person (also a stored one) with ``text``.

        ``said``: the person's own words, when ``text`` is more (a follow-up's context).

        Raises:
            SessionRequestFailed: The session is running, over, or unknown.
        """
        live = self.live.get(session_id)
        asked = live.state if live is not None else stored.state_of(session_id)
        if not text.strip() and asked == "needs_user_input":
            raise SessionRequestFailed(
                f"session {session_id} asked a question: the answer must not be blank"
            )
        if live is not None:
            if live.waiting:
                _said(live, said or text)
            if live.give_reply(text):
                return ReplySessionResult(resumed=True, state="running")
            raise SessionRequestFailed(
                f"session {session_id} is {live.state}, not waiting for a reply"
            )
        with _failed():
            restored, found = stored.stored_waiting(session_id)
            live = self._revive(session_id, restored, found)
        _said(live, said or text)
        self._launch(live, drive(live, LspPerson(self._server), reply=text))
        return ReplySessionResult(resumed=True, state="running")

    async def prompt(
        self, args: PromptSessionArgs, *, work_done_token: types.ProgressToken | None = None
    ) -> None:
        """The next turn of a session whose turn ended, in the same conversation.

        Revived from its transcript (also after a restart) with the model and workflow of
        ``configure``; a session that waits for the person takes it as its answer.

        Raises:
            SessionRequestFailed: Running, unknown, or it cannot go on.
        """
        session_id = args.session_id
        live = await self.live.settled(session_id, RESOURCE_CLOSE_S + 1)
        if live is not None:
            if not live.waiting:
                raise SessionRequestFailed(
                    f"session {session_id} is running: wait for its turn to end, or cancel it"
                )
            expanded = expanded_prompt(self._server.workspace, live.root, args.text, args.context)
            self.reply(session_id, expanded.text, args.text)
            return
        with _failed():
            restored, summary, workflow = stored.stored_session(session_id)
            root = Path(summary.root)
            expanded = expanded_prompt(self._server.workspace, root, args.text, args.context)
            text = expanded.text
            if summary.state in WAITING:
                self.reply(session_id, text, args.text)
                return
            model, workflow = self.choices.get(session_id, (summary.model, workflow))
            workflow = expanded.workflow or workflow  # a /workflow command: this turn's
            if note := next_turn(session_id, self.checkpoints_base):
                text = f"{note}\n\n{text}"
            live = self._revive(session_id, restored, summary, model=model, workflow=workflow)
        _said(live, args.text)
        person = LspPerson(self._server, work_done_token, message=args.text)
        self._launch(live, drive(live, person, reply=text))
        log.info("session %s goes on with %s, workflow %s", session_id, model, workflow)

    def configure(self, args: ConfigureSessionArgs) -> ConfigureSessionResult:
        """Choose the model and workflow of a session's next turns (``cadenza.promptSession``).

        Raises:
            SessionRequestFailed: Unknown session.
            InvalidArguments: Unknown model or workflow (nothing changed).
        """
        session_id = args.session_id
        model, workflow, root = self.current_choice(session_id)
        try:
            model, workflow = self.choices.choose(
                session_id,
                (model, workflow),
                root=root,
                model=args.model,
                workflow=args.workflow,
                config=self.config,
                providers=self.providers,
            )
        except SetupError as exc:
            raise InvalidArguments(str(exc)) from None
        return ConfigureSessionResult(session_id=session_id, model=model, workflow=workflow)

    def current_choice(self, session_id: str) -> tuple[str, str, Path]:
        """The model and workflow of the session's next turn, and its folder.

        Raises:
            SessionRequestFailed: Unknown or unreadable.
        """
        live = self.live.get(session_id)
        with _failed():
            if live is not None:
                current, root = (live.model, live.session.workflow.name), live.root
            else:
                _restored, summary, workflow = stored.stored_session(session_id)
                current, root = (summary.model, workflow), Path(summary.root)
        return (*self.choices.get(session_id, current), root)

    def _revive(
        self,
        session_id: str,
        restored: RestoredState,
        summary: SessionSummary,
        *,
        model: str | None = None,
        workflow: str | None = None,
    ) -> LspLive:
        """A live session from a stored one (its transcript appended to).

        ``model`` and ``workflow`` replace the stored ones (its next turn's choice).

        Raises:
            Unavailable: Its folder is gone, its workflow or model cannot be used, or another
                server holds it.
        """
        root = Path(restored.start.root)
        if not root.is_dir():
            raise Unavailable(f"session {session_id}: its folder {root} is gone")
        model = model or summary.model
        try:
            found = find_workflow(workflow_catalog(root), workflow or summary.workflow)
            self.providers.get(model, self.config)
        except SetupError as exc:
            raise Unavailable(f"session {session_id} cannot go on: {exc}") from None
        try:
            lock = SessionLock.acquire(session_id)
        except (SessionLocked, ValueError) as exc:
            raise Unavailable(str(exc)) from None
        plan = SessionPlan(
            session_id=session_id,
            task=summary.task,
            root=root,
            model=model,
            workflow=found,
            restored=restored,
        )
        live = self._live_session(plan)
        live.started = summary.started
        live.lock = lock
        return live

    def _revive_waiting(
        self, session_id: str, records: list[TranscriptRecord], summary: SessionSummary
    ) -> LspLive | None:
        """Revive a stored waiting session: it prompts again and takes a reply."""
        try:
            restored = stored.restored(session_id, records)
            last = restored.last
            if last is None or not last.waiting:
                raise Unavailable(f"session {session_id}: its transcript does not end waiting")
            live = self._revive(session_id, restored, summary)
        except Unavailable as exc:
            log.warning("session %s stays stored: %s", session_id, exc)
            return None
        live.outcome, live.state = last, last.stop_reason
        self._launch(live, drive(live, LspPerson(self._server), waiting=last))
        return live

    def list(self) -> ListSessionsResult:
        """Every stored session, newest first (live ones with their current state)."""
        live = dict(self.live.by_id)
        infos = []
        for summary in list_sessions(live=[sid for sid, s in live.items() if not s.waiting]):
            infos.append(session_info(summary, live.get(summary.session_id)))
        return ListSessionsResult(sessions=infos)

    def load(self, session_id: str) -> LoadSessionResult:
        """Replay a stored session's history as ``cadenza/sessionUpdate`` notifications.

        The notifications are sent before this returns. A stored session that waits for
        the person is revived: it asks again, and ``cadenza.replySession`` resumes it.

        Raises:
            SessionRequestFailed: Unknown or unreadable.
        """
        with _failed():
            records = stored.read_records(session_id)
            summary = stored.summary(session_id, records)
        updates = replay_updates(records, Path(summary.root))
        for update in updates:
            params = SessionUpdateParams(session_id=session_id, update=update)
            self._server.protocol.notify(SESSION_UPDATE, params.wire())
        live = self.live.get(session_id)
        if live is None and summary.state in WAITING:
            live = self._revive_waiting(session_id, records, summary)
        return LoadSessionResult(session=session_info(summary, live), updates=len(updates))

    async def undo(self, session_id: str) -> UndoSessionResult:
        """Undo the changes of a session that is over (``undo.undo_session``).

        Raises:
            UndoFailed: Still running, unknown, or refused (the message says why).
        """
        return await undo_session(self._server, self.live, session_id, self.checkpoints_base)

    async def aclose(self) -> None:
        """Cancel every session, wait briefly for them, and close every provider."""
        await self.live.aclose()
        await self.providers.aclose()


@contextlib.contextmanager
def _failed() -> Iterator[None]:
    """Turn the host's ``Unavailable`` into ``SessionRequestFailed``."""
    try:
        yield
    except Unavailable as exc:
        raise SessionRequestFailed(str(exc)) from None


def _said(live: LspLive, words: str) -> None:
    """The person's own words of the turn the session starts next (``cadenza.restoreTurn``)."""
    if live.recorder is not None:
        live.recorder.said(words)


def _warn(publisher: SessionPublisher, text: str) -> None:
    """A problem that does not stop the session: the server log and the session log."""
    log.warning("session %s: %s", publisher.session_id, text)
    publisher.log(text, types.MessageType.Warning)
