"""One ACP session of a connection: its workspace, mode, editor and (from the first prompt) engine.

The session service makes the engine session (``host.service``) with this face's editor port
and client tools; this face holds it in memory between prompts. The first prompt runs it, a
later one is the service's ``next_turn`` (the same next turn as the LSP face's
``cadenza.promptSession``); a turn settles its browser waits within it
(``host.driver.settle``), while a question ends the turn (the answer is the next prompt).
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
from cadenza.acp.human import person_is_done
from cadenza.acp.ordered import OrderedClient
from cadenza.acp.terminal import AcpTerminal
from cadenza.acp.trust import ask_trust, record
from cadenza.config import CadenzaConfig, ConfigError, load_config
from cadenza.config.mcp import McpServerConfig, from_acp
from cadenza.config.workspace import untrusted_note
from cadenza.host.build import SessionPlan
from cadenza.host.catalog import default_model
from cadenza.host.client_tools import client_tools
from cadenza.host.driver import Step, settle
from cadenza.host.errors import SetupError
from cadenza.host.live import LiveSession
from cadenza.host.mcp import attach_mcp, merge_servers
from cadenza.host.ports import Workflow
from cadenza.host.restore import RestoredState
from cadenza.host.service import FaceParts, SessionService
from cadenza.host.trust import FolderTrust
from cadenza.host.turn_changes import begin_turn
from cadenza.schema.outcome import SessionOutcome

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


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
        hosted: The engine session with its transcript and model (``host.service``); None
            until the first prompt.
        run: The running prompt's task.
        arrived: Prompts received so far (a prompt's ticket is the count before it).
        cancelled_before: Prompts with a smaller ticket are cancelled.
        mcp_servers: Its MCP servers (the user's config, then the client's ``mcpServers``),
            connected when the engine session is made (docs/mcp.md).
        model: ``PROVIDER/MODEL`` of the next turn (the ``model`` configuration option).
    """

    session_id: str
    root: Path
    config: CadenzaConfig
    workflow: Workflow
    client: OrderedClient
    editor: AcpEditor
    hosted: LiveSession[None] | None = None
    run: asyncio.Task[SessionOutcome] | None = None
    arrived: int = 0
    cancelled_before: int = 0
    turns: asyncio.Lock = field(default_factory=asyncio.Lock)
    mcp_servers: list[McpServerConfig] = field(default_factory=list)
    model: str = ""
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

    async def make_engine(
        self,
        task: str,
        service: SessionService[None],
        restored: RestoredState | None = None,
        workflow: Workflow | None = None,
    ) -> LiveSession[None]:
        """The engine session (through the session service), its MCP servers attached.

        Raises:
            RequestError: Its model cannot be set up.
        """
        await self.settle_trust()
        config = self.config
        model = self.model or (restored.start.model if restored else default_model(config))
        self.model = model
        plan = SessionPlan(
            session_id=self.session_id,
            task=task,
            root=self.root,
            model=model,
            workflow=workflow or self.workflow,
            restored=restored,
        )
        try:
            hosted, gate = service.assemble(
                plan,
                FaceParts(editor=self.editor, face=None, warn=self.warn),
                checkpoint=self.editor.checkpoint,
                config=config,
                tools=lambda tools: client_tools(
                    tools, AcpTerminal(self.client, self.editor), self.editor.refresh
                ),
            )
        except SetupError as exc:
            raise request_error(str(exc)) from None
        self.editor.gated_by(gate.needs_asking)
        self.hosted = hosted
        if self.mcp_servers:
            await attach_mcp(hosted.session, config.mcp, self.mcp_servers, self.warn)
        return hosted

    async def turn(
        self,
        text: str,
        service: SessionService[None],
        *,
        url_mode: bool,
        workflow: Workflow | None = None,
        words: str | None = None,
    ) -> SessionOutcome:
        """One prompt turn: the first starts the session, later ones resume it.

        ``workflow``: this turn's workflow (a ``/workflow`` command), else the session's mode.
        ``words``: the person's own, when ``text`` is more (an expanded ``/command``): the
        transcript keeps them for ``_cadenza/restoreTurn``.

        A browser wait is asked within the turn (``human``); "go on" resumes, anything else
        ends the session's run cancelled.
        """
        editor = self.editor
        editor.step_text = ""
        editor.open_calls.clear()
        # Each prompt is a new turn: the per-hunk review lists its changes only, and the model
        # hears what was undone (host.service.next_turn, as cadenza.promptSession's).
        if self.hosted is None:
            if note := begin_turn(editor.checkpoint):
                text = f"{note}\n\n{text}"
            hosted = await self.make_engine(text, service, workflow=workflow)
            hosted.said(words)
            step: Step = hosted.session.run
        else:
            hosted = self.hosted
            try:  # the mode and the model chosen since the last turn
                step = service.next_turn(
                    hosted,
                    text,
                    said=words,
                    model=self.model,
                    workflow=workflow or self.workflow,
                    config=self.config,
                )
            except SetupError as exc:
                raise request_error(str(exc)) from None
        outcome = await step()

        async def ask(waiting: SessionOutcome) -> str | None:
            done = await person_is_done(self.client, editor, waiting, url_mode=url_mode)
            return "" if done else None

        async def run(step: Step) -> SessionOutcome:
            editor.step_text = ""
            return await step()

        return await settle(
            hosted.session,
            outcome,
            waits=lambda o: o.stop_reason == "waiting_human",
            ask=ask,
            run=run,
        )

    def usage(self) -> UsageUpdate | None:
        """The ``usage_update`` of the engine session's context, once it exists."""
        if self.hosted is None:
            return None
        used, size = self.hosted.session.context_usage()
        spent = self.editor.cost
        cost = Cost(amount=spent, currency=self.editor.currency) if spent is not None else None
        return UsageUpdate(session_update="usage_update", used=used, size=size, cost=cost)

    async def aclose(self) -> None:
        """Close the engine's resources, the transcript and the update stream."""
        if self.hosted is not None:
            try:
                await asyncio.wait_for(self.hosted.session.aclose(), 5.0)
            except Exception:
                log.exception("session %s: closing its resources failed", self.session_id)
            if self.hosted.recorder is not None:
                self.hosted.recorder.close()
        await self.editor.stream.aclose()
