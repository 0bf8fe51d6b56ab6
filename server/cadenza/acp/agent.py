"""Cadenza as an ACP agent: sessions, prompt turns, cancellation, load and modes.

One ``CadenzaAgent`` serves one client connection (``run_agent`` over stdio). A session is
created by ``session/new`` (its workspace is ``cwd``); its engine ``Session`` starts with the
first prompt (the prompt is the task) and every later prompt resumes the same conversation
(``Session.resume``). Prompts of a session run one after the other; each runs as its own
task, so ``session/cancel`` can stop it. Modes are the workflow catalog of the session's
folder (``default``, ``plan-implement-review``, the workspace's own); ``session/set_mode``
picks the workflow of the next run. ``session/load`` replays a stored transcript as
``session/update`` notifications, then the session goes on from where it stopped;
``session/list`` lists the stored sessions.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_tool_call
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    UsageUpdate,
)

from cadenza import __version__
from cadenza.acp.editor import AcpClient, AcpEditor, ClientFs
from cadenza.acp.human import ElicitationClient, person_is_done
from cadenza.acp.stream import UpdateSink, UpdateStream
from cadenza.acp.terminal import TerminalClient, client_tools
from cadenza.acp.turns import PromptBlock, acp_stop_reason, final_message, prompt_text
from cadenza.acp.updates import replay_updates
from cadenza.config import CadenzaConfig, ConfigError, load_config
from cadenza.config.mcp import McpServerConfig, from_acp
from cadenza.engine.events import MovementStarted
from cadenza.engine.permissions import PermissionGate, PermissionStore
from cadenza.engine.restore import NotRestorable, RestoredState, restore_state
from cadenza.engine.session import Session, SessionOutcome
from cadenza.engine.session_list import list_sessions
from cadenza.engine.transcript import (
    EventRecord,
    TranscriptError,
    TranscriptRecord,
    read_transcript,
    transcript_path,
)
from cadenza.engine.workflows import (
    DEFAULT_WORKFLOW,
    Workflow,
    WorkflowCatalog,
    WorkflowError,
    load_catalog,
)
from cadenza.lsp.transcripts import GuardedRecorder, open_transcript, reopen_transcript
from cadenza.providers.base import Provider
from cadenza.providers.registry import create_provider, resolve_model_name
from cadenza.session_settings import session_settings
from cadenza.tools.checkpoints import CheckpointError, SessionCheckpoint
from cadenza.tools.registry import default_tools

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class AcpConnection(AcpClient, ElicitationClient, TerminalClient, UpdateSink, Protocol):
    """What the agent uses of the SDK's ``AgentSideConnection``."""


def _error(message: str, code: int = INVALID_PARAMS) -> RequestError:
    return RequestError(code, message)


@dataclass(kw_only=True)
class AcpSession:
    """One ACP session of this connection.

    Attributes:
        session_id: Its id (also the transcript's name).
        root: Its workspace folder.
        config: The configuration of that folder.
        workflow: The workflow the next run uses (the session's mode).
        editor: Its editor port (updates, edits, permissions).
        engine: The engine session; None until the first prompt.
        recorder: Its transcript.
        run: The running prompt's task.
        arrived: Prompts received so far (a prompt's ticket is the count before it).
        cancelled_before: Prompts with a smaller ticket are cancelled.
        mcp_servers: Its MCP servers (the user's config, then the client's ``mcpServers``),
            connected when the engine session is made (docs/mcp.md).
    """

    session_id: str
    root: Path
    config: CadenzaConfig
    workflow: Workflow
    editor: AcpEditor
    engine: Session | None = None
    recorder: GuardedRecorder | None = None
    run: asyncio.Task[SessionOutcome] | None = None
    arrived: int = 0
    cancelled_before: int = 0
    turns: asyncio.Lock = field(default_factory=asyncio.Lock)
    mcp_servers: list[McpServerConfig] = field(default_factory=list)


def _folder(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute() or not path.is_dir():
        raise _error(f"cwd must be an absolute path to an existing folder, got {cwd!r}")
    return path.resolve()


def _catalog(root: Path) -> WorkflowCatalog:
    """The workflows of ``root`` (read afresh: edits to workflow files apply at once)."""
    catalog = load_catalog(root, known_tools=frozenset(default_tools().names))
    for problem in catalog.errors.values():
        log.warning("skipping a workflow file: %s", problem)
    return catalog


def _workflow(catalog: WorkflowCatalog, name: str, *, fallback: bool = False) -> Workflow:
    """The workflow ``name``; with ``fallback``, ``default`` when it is gone or broken now.

    Raises:
        RequestError: Unknown or invalid (without ``fallback``).
    """
    try:
        return catalog.get(name)
    except WorkflowError as exc:
        if fallback and name != DEFAULT_WORKFLOW:
            log.warning("workflow %s: %s; going on with %s", name, exc, DEFAULT_WORKFLOW)
            return _workflow(catalog, DEFAULT_WORKFLOW)
        raise _error(str(exc)) from None


def _checkpoint(session_id: str, root: Path, *, stored: bool) -> SessionCheckpoint | None:
    """The session's undo checkpoint: the stored one for a loaded session, else a new one."""
    try:
        found = SessionCheckpoint.load(session_id) if stored else None
        return found or SessionCheckpoint.for_session(session_id, root)
    except CheckpointError as exc:
        log.warning("session %s runs without undo: %s", session_id, exc)
        return None


def _title(task: str, limit: int = 80) -> str:
    """A session's title: the first line of its task, bounded."""
    line = task.strip().splitlines()[0] if task.strip() else "(no task)"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _last_workflow(records: list[TranscriptRecord], default: str) -> str:
    """The workflow the stored session ran last (a mode change shows in its movements)."""
    name = default
    for record in records:
        if isinstance(record, EventRecord) and isinstance(record.event, MovementStarted):
            name = record.event.workflow
    return name


class CadenzaAgent:
    """The ACP ``Agent`` of one connection (see the module docstring)."""

    def __init__(self) -> None:
        self._conn: AcpConnection | None = None
        self._fs = ClientFs()
        self._sessions: dict[str, AcpSession] = {}
        self._providers: dict[str, Provider] = {}

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
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
                # Text (and resource links) only: the baseline every agent takes.
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=False
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="cadenza", title="Cadenza", version=__version__),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new session on ``cwd``; its MCP servers start with its first prompt."""
        root = _folder(cwd)
        live = self._new_live(uuid.uuid4().hex, root, DEFAULT_WORKFLOW)
        live.mcp_servers = _mcp_servers(live, mcp_servers or [])
        return NewSessionResponse(session_id=live.session_id, modes=self._modes(live))

    def _new_live(
        self, session_id: str, root: Path, workflow: str, *, stored: bool = False
    ) -> AcpSession:
        warnings: list[str] = []
        try:
            config = load_config(root, warnings)
        except ConfigError as exc:
            raise _error(f"invalid configuration: {exc}") from None
        for warning in warnings:  # workspace keys only the user's own config may set
            log.warning("session %s: %s", session_id, warning)
        catalog = _catalog(root)
        stream = UpdateStream(self.conn, session_id)
        checkpoint = _checkpoint(session_id, root, stored=stored)
        editor = AcpEditor(self.conn, stream, root, self._fs, catalog.workflows, checkpoint)
        live = AcpSession(
            session_id=session_id,
            root=root,
            config=config,
            workflow=_workflow(catalog, workflow, fallback=stored),
            editor=editor,
        )
        self._sessions[session_id] = live
        return live

    def _modes(self, live: AcpSession) -> SessionModeState:
        workflows = _catalog(live.root).workflows
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
        root = _folder(cwd) if cwd is not None else None
        infos = []
        for summary in list_sessions():
            if root is not None and Path(summary.root) != root:
                continue
            try:
                updated = datetime.fromtimestamp(summary.path.stat().st_mtime, UTC)
            except OSError:
                updated = summary.started
            infos.append(
                SessionInfo(
                    session_id=summary.session_id,
                    cwd=summary.root,
                    title=_title(summary.task),
                    updated_at=updated.isoformat(),
                )
            )
        return ListSessionsResponse(sessions=infos)

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Use the workflow ``mode_id`` from the session's next run on."""
        live = self._live(session_id)
        live.workflow = _workflow(_catalog(live.root), mode_id)  # a running turn keeps its own
        return SetSessionModeResponse()

    async def prompt(
        self, prompt: list[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run one turn: the first prompt starts the session, later ones resume it."""
        live = self._live(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise _error("the prompt has no text")
        ticket = live.arrived
        live.arrived += 1
        async with live.turns:
            if ticket < live.cancelled_before:
                return PromptResponse(stop_reason="cancelled")
            task = asyncio.create_task(self._turn(live, text), name=f"cadenza-acp-{session_id}")
            live.run = task
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                task.cancel()
                raise
            finally:
                live.run = None
            return await self._respond(live, task)

    async def _turn(self, live: AcpSession, text: str) -> SessionOutcome:
        live.editor.step_text = ""
        live.editor.open_calls.clear()
        if live.engine is None:
            live.engine = engine = self._engine(live, text)
            await _attach_mcp(live, engine)
            outcome = await engine.run()
        else:
            engine = live.engine
            engine.set_workflow(live.workflow)  # the mode chosen since the last turn
            outcome = await engine.resume(text)
        while outcome.stop_reason == "waiting_human":  # the person acts, then the turn goes on
            url_mode = self._fs.elicitation_url
            if not await person_is_done(self.conn, live.editor, outcome, url_mode=url_mode):
                engine.end_cancelled()
                return engine.last or outcome
            live.editor.step_text = ""
            outcome = await engine.resume("")
        return outcome

    async def _respond(
        self, live: AcpSession, task: asyncio.Task[SessionOutcome]
    ) -> PromptResponse:
        """Close the turn: last updates (final message or closed calls), flush, stop reason."""
        editor = live.editor
        if task.cancelled():
            for call_id in list(editor.open_calls):
                editor.stream.send(update_tool_call(call_id, status="failed"))
            editor.open_calls.clear()
            if live.engine is not None:
                editor.stream.send(_usage(live.engine))
            await editor.stream.flush()
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
        if live.engine is not None:
            editor.stream.send(_usage(live.engine))
        await editor.stream.flush()
        return PromptResponse(stop_reason=acp_stop_reason(outcome.stop_reason))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Cancel the session's running prompt (and any prompt received before this)."""
        live = self._sessions.get(session_id)
        if live is None:
            return
        live.cancelled_before = live.arrived
        if live.run is not None and not live.run.done():
            live.run.cancel()

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
        folder = _folder(cwd)
        records = self._records(session_id)
        try:
            restored = restore_state(records)
        except NotRestorable as exc:
            raise _error(f"session {session_id} cannot be loaded: {exc}") from None
        stored_root = Path(restored.start.root)
        if stored_root.is_dir() and stored_root.resolve() != folder:
            raise _error(
                f"session {session_id} belongs to the workspace {stored_root}, not {cwd}; "
                f"load it with cwd {str(stored_root)!r}"
            )
        root = stored_root.resolve() if stored_root.is_dir() else folder
        live = self._sessions.get(session_id)
        if live is None:
            workflow = _last_workflow(records, restored.start.workflow)
            live = self._new_live(session_id, root, workflow, stored=True)
            live.mcp_servers = _mcp_servers(live, mcp_servers or [])
            live.engine = self._engine(live, restored.start.task, restored=restored)
            await _attach_mcp(live, live.engine)
        for update in replay_updates(records, root, _catalog(root).workflows):
            live.editor.stream.send(update)
        await live.editor.stream.flush()
        return LoadSessionResponse(modes=self._modes(live))

    @staticmethod
    def _records(session_id: str) -> list[TranscriptRecord]:
        try:
            return read_transcript(transcript_path(session_id))
        except FileNotFoundError:
            raise _error(f"unknown session {session_id!r}") from None
        except (ValueError, TranscriptError, OSError) as exc:
            raise _error(f"session {session_id!r} cannot be read: {exc}") from None

    def _engine(
        self, live: AcpSession, task: str, *, restored: RestoredState | None = None
    ) -> Session:
        """The engine session: its provider, tools, permission gate and transcript."""
        config = live.config
        model = restored.start.model if restored is not None else resolve_model_name(None, config)
        settings = session_settings(config, model)
        provider = self._provider(model, config)

        def warn(text: str) -> None:
            log.warning("session %s: %s", live.session_id, text)

        if restored is None:
            live.recorder = open_transcript(
                session_id=live.session_id,
                task=task,
                root=live.root,
                workflow=live.workflow.name,
                model=model,
                warn=warn,
            )
        else:
            live.recorder = reopen_transcript(live.session_id, warn)
        gate = PermissionGate(
            live.editor,
            store=PermissionStore(live.root),
            gated=settings.gated_tools,
            timeout_s=settings.permission_timeout_s,
        )
        live.editor.gated_by(gate.needs_asking)
        engine = Session(
            session_id=live.session_id,
            task=task,
            root=live.root,
            provider=provider,
            editor=live.editor,
            tools=client_tools(default_tools(config.browser), self.conn, live.editor),
            settings=settings,
            workflow=live.workflow,
            recorder=live.recorder,
            permissions=gate,
            history=restored.history if restored is not None else None,
            last=restored.last if restored is not None else None,
        )
        if restored is not None:
            engine.restore_steps(restored.steps)
        return engine

    def _provider(self, model: str, config: CadenzaConfig) -> Provider:
        provider = self._providers.get(model)
        if provider is None:
            try:
                provider = create_provider(model, config)
            except ConfigError as exc:
                raise _error(str(exc)) from None
            self._providers[model] = provider
        return provider

    async def aclose(self) -> None:
        """Cancel running prompts, close sessions, transcripts and providers."""
        runs = [live.run for live in self._sessions.values() if live.run is not None]
        for run in runs:
            run.cancel()
        if runs:
            await asyncio.wait(runs, timeout=5.0)
        for live in self._sessions.values():
            if live.engine is not None:
                try:
                    await asyncio.wait_for(live.engine.aclose(), 5.0)
                except Exception:
                    log.exception("session %s: closing its resources failed", live.session_id)
            if live.recorder is not None:
                live.recorder.close()
            await live.editor.stream.aclose()
        for provider in self._providers.values():
            try:
                await provider.aclose()
            except Exception:
                log.exception("closing provider %s failed", provider.name)
        self._providers.clear()


def _mcp_servers(live: AcpSession, requested: list[Any]) -> list[McpServerConfig]:
    """The session's MCP servers: the user's config, then the client's (a taken name: skipped)."""
    servers = list(live.config.mcp.servers)
    taken = {server.name for server in servers}
    extra, problems = from_acp(requested)
    for server in extra:
        if server.name in taken:
            problems.append(f"MCP server {server.name!r} is configured already; ignoring it")
            continue
        taken.add(server.name)
        servers.append(server)
    for problem in problems:
        log.warning("session %s: %s", live.session_id, problem)
    return servers


async def _attach_mcp(live: AcpSession, engine: Session) -> None:
    """Connect the session's MCP servers; one that fails is a warning in the log."""
    if not live.mcp_servers:
        return
    from cadenza.mcp.client import attach_mcp  # the MCP SDK loads only when used

    def warn(text: str) -> None:
        log.warning("session %s: %s", live.session_id, text)

    await attach_mcp(engine, live.config.mcp, live.mcp_servers, warn)


def _usage(engine: Session) -> UsageUpdate:
    used, size = engine.context_usage()
    return UsageUpdate(session_update="usage_update", used=used, size=size)
