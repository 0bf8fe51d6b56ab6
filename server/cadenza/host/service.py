"""The session service: every face's sessions made, run, answered, revived, listed and configured.

A face translates its protocol into calls here. For each session the service makes, the face
brings its ``Editor`` and what shows the session to its person (``FaceParts``: the LSP face's
update publisher; the ACP face's client tools and the resources it keeps between turns); the
rest is done here once, the same way for every face:

- ``plan``: a new session's model (the one named, else the configured one) and workflow, both
  checked first (the provider can be made, the workflow is in the folder's catalog);
- its transcript, its tools and its engine ``Session`` (``host.build``), with the face's
  parts and its checkpoint (``open_checkpoint``), made for each start or revival;
- a session that lives as one task (``host.live``, ``host.driver.drive``) from its start or
  revival until its turn ends, holding its lock meanwhile: ``start``, ``reply`` (to one
  waiting for the person, also a stored one), ``prompt`` (its next turn: revived from its
  transcript with the model and workflow chosen since, then ``next_turn``: the turn begun in
  its checkpoint, the person's words noted, then resumed), ``steer``, ``cancel``; its MCP servers
  connect as its task begins (``launch``);
- ``undo`` and ``restore_turn`` put a session's files back through the face's ``FilesPort``
  (``host.undo_plan``, ``host.turn_restore``);
- ``configure`` chooses the model and workflow of its next turns (``host.choices``); ``list``,
  ``read`` and ``revive_waiting`` serve the stored sessions (``host.stored``).

What was asked is invalid: ``SetupError`` (a face answers "invalid params"). The session
cannot do it now (unknown, running, over, held by another server): ``Unavailable``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Generic, TypeVar

from cadenza.config import CadenzaConfig
from cadenza.engine.ports import Editor
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
from cadenza.host.checkpoints import SessionCheckpoint
from cadenza.host.choices import Choice, SessionChoices
from cadenza.host.commands import Expanded
from cadenza.host.driver import RESOURCE_CLOSE_S, PersonPort, Step, drive
from cadenza.host.errors import SetupError, Unavailable
from cadenza.host.live import LiveSession, LiveSessions
from cadenza.host.lock import SessionLock, SessionLocked
from cadenza.host.mcp import connect_then
from cadenza.host.providers import ProviderPool
from cadenza.host.restore import RestoredState
from cadenza.host.turn_changes import begin_turn
from cadenza.host.turn_restore import restore_session_turn
from cadenza.host.undo_plan import FilesPort, undo_session
from cadenza.providers.registry import resolve_model_name
from cadenza.schema.commands import RestoreTurnResult, UndoSessionResult
from cadenza.schema.outcome import WAITING, SessionOutcome
from cadenza.tools.registry import ToolRegistry, default_tools
from cadenza.tools.resources import SessionResources

log = logging.getLogger(__name__)

F = TypeVar("F")


@dataclass(frozen=True, kw_only=True)
class FaceParts(Generic[F]):
    """What a face brings to one session the service assembles (made anew for each revival).

    Attributes:
        editor: Its ``Editor`` port (documents, edits, questions, events).
        face: What the face keeps for it (the LSP face: its update publisher).
        warn: Tells the person of a problem that does not stop the session.
        reviews_each_change: The person reviews each change before it is written
            (``SessionSettings.reviews_each_change``; the LSP face's review mode ``confirm``).
        tools: Replaces some of the usual tools with the face's (e.g. through its client).
        gated: Told which tools ask the person before they run (the permission gate's
            ``needs_asking``), e.g. to show their calls as pending.
        resources: What the session's tools hold (MCP connections, browser sessions,
            language servers), kept by the face from one turn to the next and closed by it;
            None: the session's own, closed when its task ends.
    """

    editor: Editor
    face: F
    warn: Callable[[str], None]
    reviews_each_change: bool = False
    tools: Callable[[ToolRegistry], ToolRegistry] | None = None
    gated: Callable[[Callable[[str], bool]], None] | None = None
    resources: SessionResources | None = None


MakeParts = Callable[[SessionPlan, SessionCheckpoint | None], FaceParts[F]]
"""The face's parts of a session, made once its plan and checkpoint are known."""


@dataclass(frozen=True, kw_only=True)
class TurnSettings:
    """What a revived session's turn runs with.

    The LSP face leaves them to the service (``configure``'s choice, else the stored ones);
    the ACP face keeps them per session for its connection and gives them each turn.

    Attributes:
        model: ``PROVIDER/MODEL``.
        workflow: The workflow's name.
        root: Its workspace folder (the ACP face's may be where a session whose folder is
            gone was loaded).
        config: Its configuration (None: the service's).
    """

    model: str
    workflow: str
    root: Path
    config: CadenzaConfig | None = None


class SessionService(Generic[F]):
    """The sessions of one server (or one ACP connection) and the providers they share.

    Args:
        config: The configuration of the sessions that are given none of their own.
        checkpoints_base: Where checkpoints live (None: ``<user state dir>/checkpoints``).
    """

    def __init__(
        self, config: CadenzaConfig | None = None, *, checkpoints_base: Path | None = None
    ) -> None:
        self.config = config or CadenzaConfig()
        self.live: LiveSessions[F] = LiveSessions()
        self.providers = ProviderPool()
        self.choices = SessionChoices()
        """The model and workflow of sessions' next turns (``configure``)."""
        self.checkpoints_base = checkpoints_base

    def plan(
        self,
        *,
        task: str,
        root: Path,
        model: str | None,
        workflow: str,
        open_document: Path | None = None,
    ) -> SessionPlan:
        """A new session (a fresh id) with its workflow and model checked.

        ``model``: ``PROVIDER/MODEL``; None: the configured model, else the local default.

        Raises:
            SetupError: An unknown or invalid workflow (the message names the file and the
                field), or the model is malformed or names an unknown provider.
        """
        found = find_workflow(workflow_catalog(root), workflow)
        resolved = resolve_model_name(model, self.config)
        self.providers.get(resolved, self.config)
        return SessionPlan(
            session_id=uuid.uuid4().hex,
            task=task,
            root=root,
            model=resolved,
            workflow=found,
            open_document=open_document,
        )

    def open_checkpoint(
        self, session_id: str, root: Path, *, revived: bool
    ) -> SessionCheckpoint | None:
        """The session's checkpoint (``host.build.open_checkpoint``), in this service's folder."""
        return open_checkpoint(session_id, root, revived=revived, base=self.checkpoints_base)

    def next_turn(self, live: LiveSession[F], text: str, *, said: str | None) -> Step:
        """The next turn of a session whose turn ended (just revived): the run that resumes it.

        The model and workflow chosen since came with its revival (``prompt``); the turn
        begins in the session's checkpoint (its review lists this turn's changes only), and the
        prompt starts with the note on the changes the person undid in the last one.

        Args:
            live: The session.
            text: The prompt.
            said: The person's own words, when ``text`` is more (None: ``text`` is theirs).
        """
        if note := begin_turn(live.checkpoint):
            text = f"{note}\n\n{text}"
        live.said(said)
        return partial(live.session.resume, text)

    def _live(
        self, plan: SessionPlan, make_parts: MakeParts[F], config: CadenzaConfig | None
    ) -> LiveSession[F]:
        """The engine session of ``plan`` with the face's parts: checkpoint, tools, transcript.

        Raises:
            SetupError: Its model cannot be set up (nothing was opened then).
        """
        config = config or self.config
        provider = self.providers.get(plan.model, config)
        revived = plan.restored is not None
        checkpoint = self.open_checkpoint(plan.session_id, plan.root, revived=revived)
        parts = make_parts(plan, checkpoint)
        recorder = open_recorder(plan, parts.warn)
        registry = default_tools(config.browser)
        session, gate = build_session(
            plan,
            config=config,
            provider=provider,
            editor=parts.editor,
            tools=parts.tools(registry) if parts.tools is not None else registry,
            recorder=recorder,
            checkpoint=checkpoint,
            reviews_each_change=parts.reviews_each_change,
            resources=parts.resources,
        )
        if parts.gated is not None:
            parts.gated(gate.needs_asking)
        return LiveSession(
            session=session,
            face=parts.face,
            recorder=recorder,
            root=plan.root,
            model=plan.model,
            checkpoint=checkpoint,
            warn=parts.warn,
        )

    def launch(
        self,
        live: LiveSession[F],
        run: Coroutine[Any, Any, SessionOutcome],
        config: CadenzaConfig | None = None,
    ) -> None:
        """Run the session's drive as its task; with MCP servers, connect them first.

        ``config``: the session's configuration, its MCP servers (default: the service's).
        """
        mcp = (config or self.config).mcp
        if mcp.servers:
            run = connect_then(live.session, mcp, mcp.servers, live.warn, run)
        self.live.launch(live, run)

    def start(
        self,
        plan: SessionPlan,
        make_parts: MakeParts[F],
        person: PersonPort[F],
        *,
        said: str,
        config: CadenzaConfig | None = None,
    ) -> LiveSession[F]:
        """Make the session of ``plan`` and start running it as its task.

        ``said``: the person's own words of its first turn (the task may be more).
        ``config``: the session's configuration (default: the service's).

        Raises:
            SetupError: Its model cannot be set up (nothing was opened then).
        """
        live = self._live(plan, make_parts, config)
        live.said(said)
        try:
            live.lock = SessionLock.acquire(plan.session_id)
        except SessionLocked:  # a fresh id: cannot be held elsewhere
            log.warning("session %s: its lock is held elsewhere", plan.session_id)
        self.launch(live, drive(live, person), config)
        log.info(
            "session %s started with %s, workflow %s",
            plan.session_id,
            plan.model,
            plan.workflow.name,
        )
        return live

    def cancel(self, session_id: str) -> bool:
        """Cancel a running or waiting session; False when no such session is live."""
        return self.live.cancel(session_id)

    def reply(
        self,
        session_id: str,
        text: str,
        *,
        said: str | None,
        make_parts: MakeParts[F],
        person: PersonPort[F],
        settings: TurnSettings | None = None,
    ) -> LiveSession[F]:
        """Resume a session that waits for the person (also a stored one) with ``text``.

        ``said``: the person's own words, when ``text`` is more (a follow-up's context).
        ``person``: asks the person for a stored session revived to take the reply.
        ``settings``: what a stored session revived runs with (None: the stored ones).

        Returns:
            The session that took the reply (its task runs on with it).

        Raises:
            Unavailable: The session is running, over, or unknown; or the answer to its
                question is blank.
        """
        live = self.live.get(session_id)
        asked = live.state if live is not None else stored.state_of(session_id)
        if not text.strip() and asked == "needs_user_input":
            raise Unavailable(
                f"session {session_id} asked a question: the answer must not be blank"
            )
        if live is not None:
            if live.waiting:
                live.said(said or text)
            if live.give_reply(text):
                return live
            raise Unavailable(f"session {session_id} is {live.state}, not waiting for a reply")
        restored, found = stored.stored_waiting(session_id)
        live = self._revive(session_id, restored, found, make_parts, settings)
        live.said(said or text)
        config = settings.config if settings is not None else None
        self.launch(live, drive(live, person, first=partial(live.session.resume, text)), config)
        return live

    async def prompt(
        self,
        session_id: str,
        expand: Callable[[Path], Expanded],
        *,
        said: str,
        make_parts: MakeParts[F],
        person: PersonPort[F],
        answer_person: PersonPort[F],
        settings: TurnSettings | None = None,
    ) -> LiveSession[F]:
        """The next turn of a session whose turn ended, in the same conversation.

        A session this server holds in memory that waits for the person takes the prompt as
        its answer, and so does a stored one that waits where ``answer_person`` asks within a
        turn. Any other (its turn ended, or it asked where the face ends the turn: the prompt
        is its next turn) is revived from its transcript (also after a restart) and goes on
        with ``next_turn`` as its task, which holds its lock until the turn ends.

        Args:
            session_id: The session.
            expand: The prompt's text in the session's folder (a ``/command`` expanded, the
                editor's context added) and the workflow a ``/workflow`` command names.
            said: The person's own words.
            make_parts: The face's parts of the revived session.
            person: Asks the person during the turn.
            answer_person: Asks the person for a stored waiting session the prompt answers.
            settings: What the turn runs with (None: the model and workflow of
                ``configure``, else the stored ones; for an answer, the stored ones); a
                ``/workflow`` command's workflow wins.

        Returns:
            The session that takes the prompt (its task runs the turn).

        Raises:
            Unavailable: Running, unknown, held by another server, or it cannot go on.
        """
        live = await self.live.settled(session_id, RESOURCE_CLOSE_S + 1)
        if live is not None:
            if not live.waiting:
                raise Unavailable(
                    f"session {session_id} is running: wait for its turn to end, or cancel it"
                )
            expanded = expand(live.root)
            return self.reply(
                session_id, expanded.text, said=said, make_parts=make_parts, person=answer_person
            )
        restored, summary, workflow = stored.stored_session(session_id)
        given = settings
        if settings is None:
            model, workflow = self.choices.get(session_id, (summary.model, workflow))
            settings = TurnSettings(model=model, workflow=workflow, root=Path(summary.root))
        expanded = expand(settings.root)
        last = restored.last
        if summary.state in WAITING and last is not None and answer_person.asks(last):
            return self.reply(
                session_id,
                expanded.text,
                said=said,
                make_parts=make_parts,
                person=answer_person,
                settings=given,
            )
        if expanded.workflow:  # a /workflow command: this turn's
            settings = replace(settings, workflow=expanded.workflow)
        live = self._revive(session_id, restored, summary, make_parts, settings)
        turn = self.next_turn(live, expanded.text, said=said)  # revived with its settings
        self.launch(live, drive(live, person, first=turn), settings.config)
        log.info(
            "session %s goes on with %s, workflow %s",
            session_id,
            settings.model,
            settings.workflow,
        )
        return live

    def steer(self, session_id: str, text: str) -> bool:
        """Send the person's ``text`` into the session's running turn; False: none runs."""
        live = self.live.get(session_id)
        return live is not None and live.session.steer(text)

    async def undo(
        self, session_id: str, files: Callable[[SessionCheckpoint], FilesPort]
    ) -> UndoSessionResult:
        """Undo the changes of a session that is over (``host.undo_plan.undo_session``).

        Raises:
            Unavailable: Live, unknown, or refused (the message says why).
        """
        return await undo_session(self.live, session_id, files, self.checkpoints_base)

    async def restore_turn(
        self, session_id: str, turn: int, files: Callable[[SessionCheckpoint], FilesPort]
    ) -> RestoreTurnResult:
        """Restore the session to before the person's ``turn`` (``host.turn_restore``).

        Raises:
            Unavailable: Running, unknown, no such turn, or refused (the message says why).
        """
        return await restore_session_turn(self.live, session_id, turn, files, self.checkpoints_base)

    def choose(
        self,
        session_id: str,
        current: Choice,
        *,
        root: Path,
        model: str | None,
        workflow: str | None,
        config: CadenzaConfig | None = None,
    ) -> Choice:
        """Choose a model and/or workflow for the session's next turns (``host.choices``).

        Raises:
            SetupError: Unknown model or workflow (nothing changed).
        """
        return self.choices.choose(
            session_id,
            current,
            root=root,
            model=model,
            workflow=workflow,
            config=config or self.config,
            providers=self.providers,
        )

    def configure(self, session_id: str, *, model: str | None, workflow: str | None) -> Choice:
        """Choose the model and workflow of a live or stored session's next turns.

        Raises:
            Unavailable: Unknown or unreadable session.
            SetupError: Unknown model or workflow (nothing changed).
        """
        current_model, current_workflow, root = self.current_choice(session_id)
        return self.choose(
            session_id,
            (current_model, current_workflow),
            root=root,
            model=model,
            workflow=workflow,
        )

    def current_choice(self, session_id: str) -> tuple[str, str, Path]:
        """The model and workflow of the session's next turn, and its folder.

        Raises:
            Unavailable: Unknown or unreadable.
        """
        live = self.live.get(session_id)
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
        make_parts: MakeParts[F],
        settings: TurnSettings | None = None,
    ) -> LiveSession[F]:
        """A live session from a stored one (its transcript appended to), holding its lock.

        ``settings``: what it runs with (None: the stored model, workflow and folder).

        Raises:
            Unavailable: Its folder is gone, its workflow or model cannot be used, or another
                server holds it.
        """
        if settings is None:
            settings = TurnSettings(
                model=summary.model, workflow=summary.workflow, root=Path(restored.start.root)
            )
        root, model = settings.root, settings.model
        if not root.is_dir():
            raise Unavailable(f"session {session_id}: its folder {root} is gone")
        config = settings.config or self.config
        try:
            found = find_workflow(workflow_catalog(root), settings.workflow)
            self.providers.get(model, config)
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
        try:
            live = self._live(plan, make_parts, config)
        except BaseException:
            lock.release()
            raise
        live.started = summary.started
        live.lock = lock
        return live

    def read(self, session_id: str) -> tuple[list[TranscriptRecord], SessionSummary]:
        """A stored session's records (to replay) and summary.

        Raises:
            Unavailable: Unknown or unreadable.
        """
        records = stored.read_records(session_id)
        return records, stored.summary(session_id, records)

    def revive_waiting(
        self,
        session_id: str,
        records: list[TranscriptRecord],
        summary: SessionSummary,
        make_parts: MakeParts[F],
        person: PersonPort[F],
    ) -> LiveSession[F] | None:
        """The live session ``session_id``; a stored one that waits for the person is revived.

        Revived, it asks again and takes a reply. None: not live, and not waiting or it cannot
        go on (a warning in the log says why).
        """
        live = self.live.get(session_id)
        if live is not None or summary.state not in WAITING:
            return live
        try:
            restored = stored.restored(session_id, records)
            last = restored.last
            if last is None or not last.waiting:
                raise Unavailable(f"session {session_id}: its transcript does not end waiting")
            live = self._revive(session_id, restored, summary, make_parts)
        except Unavailable as exc:
            log.warning("session %s stays stored: %s", session_id, exc)
            return None
        live.outcome, live.state = last, last.stop_reason
        self.launch(live, drive(live, person, waiting=last))
        return live

    def list(self) -> list[tuple[SessionSummary, LiveSession[F] | None]]:
        """Every stored session, newest first, with its live session when it lives here."""
        live = dict(self.live.by_id)
        running = [sid for sid, s in live.items() if not s.waiting]
        return [(summary, live.get(summary.session_id)) for summary in list_sessions(live=running)]

    async def aclose(self) -> None:
        """Cancel every session, wait briefly for them, and close every provider."""
        await self.live.aclose()
        await self.providers.aclose()
