"""Cadenza as an ACP agent: sessions, prompt turns, cancellation, load and modes.

One ``CadenzaAgent`` serves one client connection (``run_agent`` over stdio). A session is
created by ``session/new`` (its workspace is ``cwd``); it starts with the first prompt (the
prompt is the task) and every later prompt goes on in the same conversation, each turn
through the session service's lifecycle (``acp.session``). Prompts of a session run one
after the other; each runs as its own task, so ``session/cancel`` can stop it. Modes are the
workflow catalog of the session's folder (``default``, ``plan-implement-review``, the
workspace's own); ``session/set_mode`` picks the workflow of the next run. ``session/load``
replays a stored transcript as ``session/update`` notifications, then its next prompt goes on
from where it stopped (a session never prompted has no transcript: ``unprompted`` keeps its
folder and mode for the load); ``session/list`` lists the stored sessions.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

from acp import RequestError, update_agent_message_text, update_tool_call
from acp.schema import (
    ClientCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)
from pydantic import ValidationError

from cadenza.acp import unprompted
from cadenza.acp.config_options import commands_update, config_options, set_option
from cadenza.acp.early import initialize_result
from cadenza.acp.editor import AcpEditor, ClientFs
from cadenza.acp.listing import folder_of, session_infos, session_root
from cadenza.acp.ordered import AcpConnection, OrderedClient
from cadenza.acp.restore import parse_args, restore_acp_turn
from cadenza.acp.session import INTERNAL_ERROR, AcpSession, request_error
from cadenza.acp.steer import steer_session
from cadenza.acp.stream import UpdateStream
from cadenza.acp.turns import PromptBlock, acp_stop_reason, final_message, prompt_text
from cadenza.acp.updates import replay_updates
from cadenza.config import ConfigError, load_config
from cadenza.host import stored
from cadenza.host.build import find_workflow, workflow_catalog
from cadenza.host.catalog import default_model
from cadenza.host.commands import expand
from cadenza.host.errors import SetupError, Unavailable
from cadenza.host.ports import DEFAULT_WORKFLOW
from cadenza.host.service import SessionService
from cadenza.host.trust import folder_trust
from cadenza.schema.methods import ACP_RESTORE_TURN, ACP_STEER_SESSION
from cadenza.schema.outcome import SessionOutcome

log = logging.getLogger(__name__)

_error = request_error


class CadenzaAgent:
    """The ACP ``Agent`` of one connection (see the module docstring)."""

    def __init__(self) -> None:
        self._conn: AcpConnection | None = None
        self._fs = ClientFs()
        self._sessions: dict[str, AcpSession] = {}
        self._service: SessionService[None] = SessionService()
        """Runs the sessions' turns; the providers and choices they share."""

    def on_connect(self, conn: AcpConnection) -> None:
        """Keep the connection (the SDK calls this before any request)."""
        self._conn = conn

    @property
    def conn(self) -> AcpConnection:
        """The client connection."""
        if self._conn is None:
            raise _error("not connected", INTERNAL_ERROR)
        return self._conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Negotiate: the client's fs and terminal capabilities; ours (load, text prompts)."""
        caps = client_capabilities or ClientCapabilities()
        fs = caps.fs
        self._fs = ClientFs(
            read_text_file=bool(fs and fs.read_text_file),
            write_text_file=bool(fs and fs.write_text_file),
            terminal=bool(caps.terminal),
            elicitation_url=bool(caps.elicitation and caps.elicitation.url is not None),
        )
        log.info("client %s: %s", client_info.name if client_info else "?", self._fs)
        return InitializeResponse.model_validate(initialize_result(protocol_version))

    async def take_initialize(self, params: dict[str, Any]) -> None:
        """Take an ``initialize`` that ``acp.early`` answered before the SDK was loaded."""
        try:
            request = InitializeRequest.model_validate(params)
        except ValidationError as exc:
            # The early reader only answers params its schema (the SDK's) accepts; should the
            # two ever differ, keep the defaults.
            log.warning("the early initialize does not validate: %s", exc)
            return
        await self.initialize(
            request.protocol_version, request.client_capabilities, request.client_info
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new session on ``cwd``; its MCP servers start with its first prompt."""
        root = folder_of(cwd)
        live = self._new_live(uuid.uuid4().hex, root, DEFAULT_WORKFLOW)
        live.take_mcp_servers(mcp_servers or [])
        unprompted.remember(live.session_id, root, live.workflow.name)
        self._announce_commands(live)
        return NewSessionResponse(
            session_id=live.session_id,
            modes=self._modes(live),
            config_options=await config_options(live),
        )

    @staticmethod
    def _announce_commands(live: AcpSession) -> None:
        """Send ``available_commands_update`` once the session's response is out."""
        update = commands_update(live)
        asyncio.get_running_loop().call_soon(live.editor.stream.send, update)

    def _new_live(
        self,
        session_id: str,
        root: Path,
        workflow: str,
        *,
        revived: bool = False,
        model: str | None = None,
    ) -> AcpSession:
        warnings: list[str] = []
        trust = folder_trust(root)
        try:  # held settings of an undecided folder wait for the first prompt's question
            config = load_config(
                root, warnings, trusted=trust.trusted, note_held=not trust.undecided
            )
        except ConfigError as exc:
            raise _error(f"invalid configuration: {exc}") from None
        for warning in warnings:  # workspace keys only the user's own config may set
            log.warning("session %s: %s", session_id, warning)
        catalog = workflow_catalog(root)
        try:
            chosen = find_workflow(catalog, workflow, fallback=revived)
        except SetupError as exc:
            raise _error(str(exc)) from None
        stream = UpdateStream(self.conn, session_id)
        client = OrderedClient(self.conn, stream)
        editor = AcpEditor(client, stream, root, self._fs, catalog.workflows)
        model = model or default_model(config)
        model, name = self._service.choices.get(session_id, (model, chosen.name))
        if name != chosen.name:
            chosen = find_workflow(catalog, name, fallback=True)
        live = AcpSession(
            session_id=session_id,
            root=root,
            config=config,
            workflow=chosen,
            client=client,
            editor=editor,
            model=model,
            started=revived,
            trust=trust if trust.undecided else None,
        )
        self._sessions[session_id] = live
        return live

    def _modes(self, live: AcpSession) -> SessionModeState:
        workflows = workflow_catalog(live.root).workflows
        names = sorted(workflows, key=lambda name: (name != DEFAULT_WORKFLOW, name))
        return SessionModeState(
            current_mode_id=live.workflow.name,
            available_modes=[
                SessionMode(id=name, name=name, description=workflows[name].description or None)
                for name in names
            ],
        )

    def _live(self, session_id: str) -> AcpSession:
        live = self._sessions.get(session_id)
        if live is None:
            raise _error(f"unknown session {session_id!r}")
        return live

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The stored sessions (of ``cwd`` when given), newest first, in one page."""
        root = folder_of(cwd) if cwd is not None else None
        return ListSessionsResponse(
            sessions=session_infos([s for s, _live in self._service.list()], root)
        )

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Use the workflow ``mode_id`` from the session's next run on."""
        live = self._live(session_id)
        try:  # a running turn keeps its own
            live.workflow = find_workflow(workflow_catalog(live.root), mode_id)
        except SetupError as exc:
            raise _error(str(exc)) from None
        if not live.started:
            unprompted.remember(session_id, live.root, live.workflow.name)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Set the model or the mode of the session's next turns; answer every option."""
        live = self._live(session_id)
        set_option(live, config_id, value, self._service)
        return SetSessionConfigOptionResponse(config_options=await config_options(live))

    async def prompt(
        self, prompt: list[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run one turn: the first prompt starts the session, later ones go on with it."""
        live = self._live(session_id)
        words = prompt_text(prompt)
        expanded = expand(words, live.root)  # a leading /command
        text = expanded.text
        if not text.strip():
            raise _error("the prompt has no text")
        try:
            workflow = (
                find_workflow(workflow_catalog(live.root), expanded.workflow)
                if expanded.workflow
                else None
            )
        except SetupError as exc:
            raise _error(str(exc)) from None
        ticket = live.arrived
        live.arrived += 1
        async with live.turns:
            if ticket < live.cancelled_before:
                return PromptResponse(stop_reason="cancelled")
            turn = live.turn(
                expanded,
                words,
                self._service,
                url_mode=self._fs.elicitation_url,
                workflow=workflow,
            )
            task = asyncio.create_task(turn, name=f"cadenza-acp-{session_id}")
            live.run = task
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                task.cancel()
                raise
            finally:
                live.run = None
                if live.started:  # its transcript exists now
                    unprompted.forget(session_id)
            try:
                return await self._respond(live, task)
            finally:
                live.running = None

    async def _respond(
        self, live: AcpSession, task: asyncio.Task[SessionOutcome]
    ) -> PromptResponse:
        """Close the turn: last updates (final message or closed calls), flush, stop reason."""
        editor = live.editor
        if task.cancelled():
            for call_id in list(editor.open_calls):
                editor.stream.send(update_tool_call(call_id, status="failed"))
            editor.open_calls.clear()
            await self._close_turn(live)
            return PromptResponse(stop_reason="cancelled")
        exc = task.exception()
        if exc is not None:
            await editor.stream.flush()
            if isinstance(exc, RequestError):  # e.g. the model could not be set up
                raise exc
            log.error("session %s: the turn failed", live.session_id, exc_info=exc)
            raise _error(f"internal error: {type(exc).__name__}: {exc}", INTERNAL_ERROR)
        outcome = task.result()
        text = final_message(
            outcome.stop_reason, outcome.message, editor.step_text, outcome.missing_info
        )
        if text is not None and outcome.url:
            text += f"\n{outcome.url}"  # waiting_human: the page the person should open
        if text is not None:
            editor.stream.send(update_agent_message_text(text))
        await self._close_turn(live)
        return PromptResponse(stop_reason=acp_stop_reason(outcome.stop_reason))

    @staticmethod
    async def _close_turn(live: AcpSession) -> None:
        """The turn's last update (the context's usage), then every update is sent."""
        usage = live.usage()
        if usage is not None:
            live.editor.stream.send(usage)
        await live.editor.stream.flush()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Cancel the session's running prompt (and any prompt received before this)."""
        live = self._sessions.get(session_id)
        if live is None:
            return
        live.cancelled_before = live.arrived
        run = live.run
        # The session service's task of the turn (a wait it is in ends cancelled); before
        # that task exists, the turn that is beginning.
        if run is not None and not run.done() and not self._service.cancel(session_id):
            run.cancel()

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """Replay a stored session's history as updates, then keep it live to go on.

        ``cwd`` must be an existing folder, and the session's stored workspace when that
        still exists (a session is not moved to another folder); when the stored folder is
        gone, ``cwd`` is the session's workspace from now on.
        """
        folder = folder_of(cwd)
        try:
            records = stored.read_records(session_id)
            restored = stored.restored(session_id, records)
        except Unavailable as exc:
            created = unprompted.recall(session_id)
            if created is None:
                raise _error(str(exc)) from None
            return await self._load_unprompted(session_id, created, folder, mcp_servers)
        root = session_root(session_id, Path(restored.start.root), folder)
        live = self._sessions.get(session_id)
        if live is None:
            workflow = stored.last_workflow(records, restored.start.workflow)
            live = self._new_live(
                session_id, root, workflow, revived=True, model=restored.start.model
            )
            live.take_mcp_servers(mcp_servers or [])
            await live.settle_trust()
        for update in replay_updates(records, root, workflow_catalog(root).workflows):
            live.editor.stream.send(update)
        await live.editor.stream.flush()
        self._announce_commands(live)
        return LoadSessionResponse(
            modes=self._modes(live), config_options=await config_options(live)
        )

    async def _load_unprompted(
        self,
        session_id: str,
        created: unprompted.Unprompted,
        folder: Path,
        mcp_servers: list[Any] | None,
    ) -> LoadSessionResponse:
        """A session created (by an earlier agent) and never prompted: nothing to replay."""
        root = session_root(session_id, created.root, folder)
        live = self._sessions.get(session_id)
        if live is None:
            live = self._new_live(session_id, root, created.workflow)
            live.take_mcp_servers(mcp_servers or [])
        self._announce_commands(live)
        return LoadSessionResponse(
            modes=self._modes(live), config_options=await config_options(live)
        )

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Cadenza's extension methods (the SDK strips the ``_``): steerSession, restoreTurn."""
        if method == ACP_STEER_SESSION.removeprefix("_"):
            return steer_session(self._sessions, self._service, params)
        if method == ACP_RESTORE_TURN.removeprefix("_"):
            args = parse_args(params)
            live = self._sessions.get(args.session_id)
            return (await restore_acp_turn(live, args, self._service)).wire()
        raise RequestError.method_not_found(f"_{method}")

    async def aclose(self) -> None:
        """Cancel running prompts, close sessions, transcripts and providers."""
        runs = [live.run for live in self._sessions.values() if live.run is not None]
        for run in runs:
            run.cancel()
        if runs:
            await asyncio.wait(runs, timeout=5.0)
        for live in self._sessions.values():
            await live.aclose()
        await self._service.aclose()
