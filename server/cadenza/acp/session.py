"""One ACP session of a connection: its workspace, mode, model, editor and prompt turns.

A session has one lifecycle on both faces (``host.service``): each prompt turn is a task of
the session service, which holds the session's lock until the turn ends. The first prompt
starts the session (``SessionService.start``); a later one (also after ``session/load``) is
revived from its transcript and goes on with ``next_turn`` (``SessionService.prompt``), as the
LSP face's ``cadenza.promptSession`` does. Between turns the lock is free (``cadenza undo``,
another server, a restore may take the session) and this face keeps only its own part: the
workspace and its configuration, the editor port (the texts it knows, the cost so far), the
mode and model chosen, the ticketing of prompts, and the resources of the session's tools (its
MCP servers, browser sessions and language servers stay up for the connection). A browser
wait is asked within the turn (``human.AcpPerson``); a question ends the turn, and the answer
is the next prompt.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import Cost, UsageUpdate

from cadenza.acp.editor import AcpEditor
from cadenza.acp.human import AcpPerson
from cadenza.acp.ordered import OrderedClient
from cadenza.acp.terminal import AcpTerminal
from cadenza.acp.trust import ask_trust, record
from cadenza.config import CadenzaConfig, ConfigError, load_config
from cadenza.config.mcp import McpServerConfig, from_acp
from cadenza.config.workspace import untrusted_note
from cadenza.host.build import SessionPlan
from cadenza.host.catalog import default_model
from cadenza.host.checkpoints import SessionCheckpoint
from cadenza.host.client_tools import client_tools
from cadenza.host.commands import Expanded
from cadenza.host.errors import SetupError, Unavailable
from cadenza.host.live import LiveSession
from cadenza.host.mcp import merge_servers
from cadenza.host.ports import SessionResources, Workflow
from cadenza.host.service import FaceParts, SessionService, TurnSettings
from cadenza.host.trust import FolderTrust
from cadenza.schema.outcome import SessionOutcome

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_FAILED = -32803
"""LSP 3.17's ``RequestFailed``: the request was valid, but cannot be done now."""


def request_error(message: str, code: int = INVALID_PARAMS) -> RequestError:
    """The JSON-RPC error the client gets (invalid params unless told otherwise)."""
    return RequestError(code, message)


@dataclass(kw_only=True)
class AcpSession:
    """One ACP session of this connection.

    Attributes:
        session_id: Its id (also the transcript's name).
        root: Its workspace folder.
        config: The configuration of that folder.
        workflow: The workflow the next run uses (the session's mode).
        client: The connection, ordered after the session's updates (``ordered``).
        editor: Its editor port (updates, edits, permissions).
        started: Its transcript exists (the first prompt started it, or it was loaded).
        running: The engine session of the running turn (None between turns).
        run: The running prompt's task.
        arrived: Prompts received so far (a prompt's ticket is the count before it).
        cancelled_before: Prompts with a smaller ticket are cancelled.
        mcp_servers: Its MCP servers (the user's config, then the client's ``mcpServers``),
            connected by its first turn and kept for the connection (docs/mcp.md).
        model: ``PROVIDER/MODEL`` of the next turn (the ``model`` configuration option).
        resources: What the session's tools hold, kept from one turn to the next.
    """

    session_id: str
    root: Path
    config: CadenzaConfig
    workflow: Workflow
    client: OrderedClient
    editor: AcpEditor
    started: bool = False
    running: LiveSession[None] | None = None
    run: asyncio.Task[SessionOutcome] | None = None
    arrived: int = 0
    cancelled_before: int = 0
    turns: asyncio.Lock = field(default_factory=asyncio.Lock)
    mcp_servers: list[McpServerConfig] = field(default_factory=list)
    model: str = ""
    resources: SessionResources = field(default_factory=SessionResources)
    trust: FolderTrust | None = None
    """The folder's trust, while its question is pending (``acp.trust``)."""
    client_servers: list[McpServerConfig] = field(default_factory=list)
    """The MCP servers the client gave in ``session/new``."""

    def warn(self, text: str) -> None:
        """A problem that does not stop the session (the agent's log)."""
        log.warning("session %s: %s", self.session_id, text)

    def take_mcp_servers(self, requested: list[Any]) -> None:
        """Take the session's MCP servers: the user's config, then the client's.

        A client's server whose name is taken already is skipped (a warning).
        """
        extra, problems = from_acp(requested)
        for problem in problems:
            self.warn(problem)
        self.client_servers = extra
        self.mcp_servers = merge_servers(self.config.mcp.servers, extra, self.warn)

    async def settle_trust(self) -> None:
        """Ask the pending trust question; trusted, apply the folder's held settings now.

        The model changes to the folder's only when it is still the configured default
        (one the person chose stays).
        """
        trust, self.trust = self.trust, None
        if trust is None or not trust.undecided:
            return
        answer = await ask_trust(
            self.client, self.session_id, trust, self.config.permissions.timeout_s
        )
        record(answer, trust)
        if answer not in ("trusted", "session"):
            assert trust.settings is not None  # undecided: it has held settings
            self.warn(untrusted_note(trust.settings))
            return
        try:
            config = load_config(self.root, [], trusted=True)
        except ConfigError as exc:
            self.warn(f"the trusted configuration is invalid: {exc}")
            return
        if self.model == default_model(self.config):
            self.model = default_model(config)
        self.config = config
        self.mcp_servers = merge_servers(config.mcp.servers, self.client_servers, self.warn)

    def parts(self, plan: SessionPlan, checkpoint: SessionCheckpoint | None) -> FaceParts[None]:
        """This face's part of the engine session of a turn: its editor, client tools, resources."""
        self.editor.checkpoint = checkpoint
        return FaceParts(
            editor=self.editor,
            face=None,
            warn=self.warn,
            tools=lambda tools: client_tools(
                tools, AcpTerminal(self.client, self.editor), self.editor.refresh
            ),
            gated=self.editor.gated_by,
            resources=self.resources,
        )

    def session_config(self) -> CadenzaConfig:
        """The folder's configuration with the session's MCP servers (the client's too)."""
        mcp = self.config.mcp.model_copy(update={"servers": self.mcp_servers})
        return self.config.model_copy(update={"mcp": mcp})

    async def launch_turn(
        self,
        expanded: Expanded,
        words: str,
        service: SessionService[None],
        *,
        url_mode: bool,
        workflow: Workflow | None = None,
    ) -> LiveSession[None]:
        """Begin one prompt turn as the session service's task: the engine session that runs it.

        The first prompt starts the session; a later one revives it from its transcript.
        ``expanded``: the prompt (a ``/command`` expanded); ``words``: the person's own, which
        the transcript keeps for ``_cadenza/restoreTurn``; ``workflow``: this turn's (a
        ``/workflow`` command), else the session's mode.

        Raises:
            RequestError: The model cannot be set up (invalid params), or the session cannot
                go on now (request failed: e.g. another server holds it).
        """
        self.running = None
        self.editor.step_text = ""
        self.editor.open_calls.clear()
        await self.settle_trust()
        person = AcpPerson(self.client, self.editor, url_mode=url_mode)
        config = self.session_config()
        try:
            if not self.started:
                plan = SessionPlan(
                    session_id=self.session_id,
                    task=expanded.text,
                    root=self.root,
                    model=self.model,
                    workflow=workflow or self.workflow,
                )
                hosted = service.start(plan, self.parts, person, said=words, config=config)
            else:
                settings = TurnSettings(
                    model=self.model, workflow=self.workflow.name, root=self.root, config=config
                )
                hosted = await service.prompt(
                    self.session_id,
                    lambda _root: expanded,
                    said=words,
                    make_parts=self.parts,
                    person=person,
                    answer_person=person,
                    settings=settings,
                )
        except SetupError as exc:
            raise request_error(str(exc)) from None
        except Unavailable as exc:
            raise request_error(str(exc), REQUEST_FAILED) from None
        self.started = True
        self.running = hosted
        return hosted

    async def turn(
        self,
        expanded: Expanded,
        words: str,
        service: SessionService[None],
        *,
        url_mode: bool,
        workflow: Workflow | None = None,
    ) -> SessionOutcome:
        """One prompt turn (``launch_turn``), until it ends: how it ended.

        Cancelled, the turn's task is cancelled too (awaited here, it is cancelled with this).
        """
        hosted = await self.launch_turn(
            expanded, words, service, url_mode=url_mode, workflow=workflow
        )
        assert hosted.task is not None  # launched
        return await hosted.task

    def usage(self) -> UsageUpdate | None:
        """The ``usage_update`` of the turn's engine session's context, once it exists."""
        if self.running is None:
            return None
        used, size = self.running.session.context_usage()
        spent = self.editor.cost
        cost = Cost(amount=spent, currency=self.editor.currency) if spent is not None else None
        return UsageUpdate(session_update="usage_update", used=used, size=size, cost=cost)

    async def aclose(self) -> None:
        """Close what the session's tools hold and the update stream."""
        try:
            await asyncio.wait_for(self.resources.aclose(), 5.0)
        except Exception:
            log.exception("session %s: closing its resources failed", self.session_id)
        await self.editor.stream.aclose()
