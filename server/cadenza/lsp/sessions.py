"""The LSP face of the session service: ``cadenza.*Session`` commands in, sessions out.

The service makes, drives and revives sessions (``host.service``); this module only
translates: a command's arguments into the service's (the workspace folder from ``rootUri``
or the client's folders, the prompt's editor context made text), each session's LSP parts
(its update publisher and ``LspEditor``), the service's errors into the JSON-RPC errors the
server answers with, and stored sessions into ``SessionInfo`` and replayed
``cadenza/sessionUpdate`` notifications. A session runs as a tracked task, so
``cadenza.startSession`` answers at once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from cadenza.config import CadenzaConfig
from cadenza.host.build import SessionPlan
from cadenza.host.checkpoints import SessionCheckpoint
from cadenza.host.errors import SetupError, Unavailable
from cadenza.host.live import LiveSessions
from cadenza.host.providers import ProviderPool
from cadenza.host.service import FaceParts, SessionService
from cadenza.lsp.editor import LspEditor
from cadenza.lsp.followups import expanded_prompt
from cadenza.lsp.live import LspPerson
from cadenza.lsp.params import UnusableChoice, document_path, workspace_root
from cadenza.lsp.publisher import SessionPublisher
from cadenza.lsp.replay import replay_updates, session_info
from cadenza.lsp.review import ReviewMode
from cadenza.lsp.undo import SessionUndo, UndoFailed
from cadenza.schema.commands import (
    ConfigureSessionArgs,
    ConfigureSessionResult,
    ListSessionsResult,
    LoadSessionResult,
    PromptSessionArgs,
    ReplySessionResult,
    RestoreTurnResult,
    StartSessionArgs,
    UndoSessionResult,
)
from cadenza.schema.methods import SESSION_UPDATE
from cadenza.schema.updates import SessionUpdateParams

log = logging.getLogger(__name__)


class SessionRequestFailed(Exception):
    """A session command cannot be done (unknown session, not waiting...).

    The server answers with JSON-RPC error -32803 (``RequestFailed``, LSP 3.17) and this message.
    """


class SessionManager:
    """The session service as this server's client sees it."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self.service: SessionService[SessionPublisher] = SessionService()
        self._by_request: dict[int | str, str] = {}
        """``cadenza.startSession`` request id → session id, for ``$/cancelRequest``."""

    @property
    def config(self) -> CadenzaConfig:
        """The configuration of the sessions started from now on (``initialize``'s)."""
        return self.service.config

    @config.setter
    def config(self, config: CadenzaConfig) -> None:
        self.service.config = config

    @property
    def live(self) -> LiveSessions[SessionPublisher]:
        """The sessions running or waiting in this server."""
        return self.service.live

    @property
    def providers(self) -> ProviderPool:
        """The providers the sessions share (inline completions share them too)."""
        return self.service.providers

    @property
    def checkpoints_base(self) -> Path | None:
        """Where checkpoints live (None: ``<user state dir>/checkpoints``)."""
        return self.service.checkpoints_base

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
            InvalidArguments: No usable workspace folder.
            UnusableChoice: An unknown or invalid workflow (the message names the file and the
                field); or the model is malformed, names an unknown provider, or cannot be set
                up.
        """
        root = workspace_root(self._server.workspace, args.root_uri)
        expanded = expanded_prompt(self._server.workspace, root, args.task, args.context)
        try:
            plan = self.service.plan(
                task=expanded.text,
                root=root,
                model=args.model,
                workflow=expanded.workflow or args.workflow,
                open_document=document_path(args.text_document),
            )
        except SetupError as exc:
            raise UnusableChoice(str(exc)) from None
        if request_id is not None:
            self._by_request[request_id] = plan.session_id
        person = LspPerson(self._server, work_done_token, message=args.task)
        self.service.start(plan, partial(self._parts, review=args.review), person, said=args.task)
        return plan.session_id

    def _parts(
        self,
        plan: SessionPlan,
        checkpoint: SessionCheckpoint | None,
        review: ReviewMode | None = None,
    ) -> FaceParts[SessionPublisher]:
        """A session's LSP parts: its update publisher and its editor in its review mode."""
        publisher = SessionPublisher(
            self._server, session_id=plan.session_id, root=plan.root, model=plan.model
        )
        mode = review or self.config.review
        editor = LspEditor(self._server, publisher, review=mode, checkpoint=checkpoint)
        return FaceParts(
            editor=editor,
            face=publisher,
            warn=partial(_warn, publisher),
            reviews_each_change=mode == "confirm",
        )

    def cancel(self, session_id: str) -> bool:
        """Cancel a running or waiting session; False when no such session is live."""
        return self.service.cancel(session_id)

    def cancel_request(self, request_id: int | str) -> None:
        """``$/cancelRequest`` for a ``cadenza.startSession`` request: cancel its session."""
        session_id = self._by_request.pop(request_id, None)
        if session_id is not None and self.cancel(session_id):
            log.info("session %s cancelled by $/cancelRequest %s", session_id, request_id)

    def reply(self, session_id: str, text: str) -> ReplySessionResult:
        """Resume a session that waits for the person (also a stored one) with ``text``.

        Raises:
            SessionRequestFailed: The session is running, over, or unknown.
        """
        with _failed():
            self.service.reply(
                session_id,
                text,
                said=None,
                make_parts=self._parts,
                person=LspPerson(self._server),
            )
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
        workspace = self._server.workspace
        with _failed():
            await self.service.prompt(
                args.session_id,
                lambda root: expanded_prompt(workspace, root, args.text, args.context),
                said=args.text,
                make_parts=self._parts,
                person=LspPerson(self._server, work_done_token, message=args.text),
                answer_person=LspPerson(self._server),
            )

    def configure(self, args: ConfigureSessionArgs) -> ConfigureSessionResult:
        """Choose the model and workflow of a session's next turns (``cadenza.promptSession``).

        Raises:
            SessionRequestFailed: Unknown session.
            UnusableChoice: Unknown model or workflow (nothing changed).
        """
        try:
            with _failed():
                model, workflow = self.service.configure(
                    args.session_id, model=args.model, workflow=args.workflow
                )
        except SetupError as exc:
            raise UnusableChoice(str(exc)) from None
        return ConfigureSessionResult(session_id=args.session_id, model=model, workflow=workflow)

    def current_choice(self, session_id: str) -> tuple[str, str, Path]:
        """The model and workflow of the session's next turn, and its folder.

        Raises:
            SessionRequestFailed: Unknown or unreadable.
        """
        with _failed():
            return self.service.current_choice(session_id)

    def list(self) -> ListSessionsResult:
        """Every stored session, newest first (live ones with their current state)."""
        listed = self.service.list()
        return ListSessionsResult(sessions=[session_info(s, live) for s, live in listed])

    def load(self, session_id: str) -> LoadSessionResult:
        """Replay a stored session's history as ``cadenza/sessionUpdate`` notifications.

        The notifications are sent before this returns. A stored session that waits for
        the person is revived: it asks again, and ``cadenza.replySession`` resumes it.

        Raises:
            SessionRequestFailed: Unknown or unreadable.
        """
        with _failed():
            records, summary = self.service.read(session_id)
        updates = replay_updates(records, Path(summary.root))
        for update in updates:
            params = SessionUpdateParams(session_id=session_id, update=update)
            self._server.protocol.notify(SESSION_UPDATE, params.wire())
        live = self.service.revive_waiting(
            session_id, records, summary, self._parts, LspPerson(self._server)
        )
        return LoadSessionResult(session=session_info(summary, live), updates=len(updates))

    def steer(self, session_id: str, text: str) -> bool:
        """Send ``text`` into the session's running turn; False when none runs."""
        return self.service.steer(session_id, text)

    async def undo(self, session_id: str) -> UndoSessionResult:
        """Undo the changes of a session that is over, through this client.

        Raises:
            SessionRequestFailed: Still live, unknown, or refused (the message names the file
                and why; nothing was undone).
        """
        with _failed():
            try:
                return await self.service.undo(session_id, partial(SessionUndo, self._server))
            except UndoFailed as exc:
                raise SessionRequestFailed(str(exc)) from None

    async def restore_turn(self, session_id: str, turn: int) -> RestoreTurnResult:
        """Restore a session to before the person's ``turn``; a waiting one stops waiting.

        Raises:
            SessionRequestFailed: Running or unknown, no such turn, or its files could not be
                put back (nothing was restored then).
        """
        with _failed():
            try:
                return await self.service.restore_turn(
                    session_id, turn, partial(SessionUndo, self._server)
                )
            except UndoFailed as exc:
                raise SessionRequestFailed(f"cannot restore turn {turn}: {exc}") from None

    async def aclose(self) -> None:
        """Cancel every session, wait briefly for them, and close every provider."""
        await self.service.aclose()


@contextlib.contextmanager
def _failed() -> Iterator[None]:
    """Turn the service's ``Unavailable`` into ``SessionRequestFailed``."""
    try:
        yield
    except Unavailable as exc:
        raise SessionRequestFailed(str(exc)) from None


def _warn(publisher: SessionPublisher, text: str) -> None:
    """A problem that does not stop the session: the server log and the session log."""
    log.warning("session %s: %s", publisher.session_id, text)
    publisher.log(text, types.MessageType.Warning)
