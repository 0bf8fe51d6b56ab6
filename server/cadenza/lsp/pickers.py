"""``cadenza.listModels``, ``cadenza.pullModel``, ``cadenza.listCommands``: what editors offer.

The lists come from the host (``host.catalog``, ``host.commands``); pulling a model runs the
same download as ``cadenza models pull`` in a worker thread, with work-done progress on the
command's ``workDoneToken`` (or a token the server creates). Malformed arguments are
``-32602``; an unknown model or a failed download is ``-32803`` with a sentence that says why.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.lsp.server import LanguageServer

from cadenza.lsp.params import command_args, optional_root, request_failed
from cadenza.lsp.protocol import command_work_done_token
from cadenza.schema.methods import LIST_COMMANDS, LIST_MODELS, PULL_MODEL
from cadenza.schema.pickers import (
    CommandItem,
    CurrentChoice,
    ListCommandsArgs,
    ListCommandsResult,
    ListModelsArgs,
    ListModelsResult,
    ModelItem,
    PullModelArgs,
    PullModelResult,
    WorkflowItem,
)

if TYPE_CHECKING:
    from cadenza.host.ports import PullProgress
    from cadenza.lsp.sessions import SessionManager

log = logging.getLogger(__name__)
DEFAULT_WORKFLOW = "default"


def _sessions(ls: LanguageServer) -> SessionManager:
    manager: SessionManager = getattr(ls, "sessions")  # noqa: B009 - CadenzaServer.sessions
    return manager


async def list_models(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.listModels {sessionId?, rootUri?}`` → ``{models, workflows, current}``."""
    from cadenza.host.catalog import default_model, offered_models, workflow_choices

    args: ListModelsArgs = command_args(LIST_MODELS, ListModelsArgs, arguments, optional=True)
    manager = _sessions(ls)
    root = optional_root(ls.workspace, LIST_MODELS, args.root_uri)
    current = (default_model(manager.config), DEFAULT_WORKFLOW)
    if args.session_id is not None:
        from cadenza.lsp.sessions import SessionRequestFailed

        try:
            model, workflow, root = manager.current_choice(args.session_id)
        except SessionRequestFailed as exc:
            raise request_failed(str(exc)) from None
        current = (model, workflow)
    return ListModelsResult(
        models=[
            ModelItem(id=m.id, label=m.label, local=m.local, pulled=m.pulled, where=m.where)
            for m in await offered_models(manager.config, current[0])
        ],
        workflows=[
            WorkflowItem(name=w.name, description=w.description)
            for w in workflow_choices(root or Path(ls.workspace.root_path or "/"))
        ],
        current=CurrentChoice(model=current[0], workflow=current[1]),
    ).wire()


def list_commands(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.listCommands {rootUri?}`` → ``{commands: [{name, description, hint}]}``."""
    from cadenza.host.commands import slash_commands

    args: ListCommandsArgs = command_args(LIST_COMMANDS, ListCommandsArgs, arguments, optional=True)
    root = optional_root(ls.workspace, LIST_COMMANDS, args.root_uri) or Path(
        ls.workspace.root_path or "/"
    )
    return ListCommandsResult(
        commands=[
            CommandItem(name=c.name, description=c.description, hint=c.hint)
            for c in slash_commands(root)
        ]
    ).wire()


async def pull_model(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.pullModel {model}`` (progress on ``workDoneToken``) → ``{model}``."""
    from cadenza.host.catalog import pull, pull_label
    from cadenza.host.errors import SetupError
    from cadenza.lsp.capabilities import ClientFeatures
    from cadenza.lsp.progress import SessionProgress

    args: PullModelArgs = command_args(PULL_MODEL, PullModelArgs, arguments, optional=True)
    try:
        label = pull_label(args.model)
    except SetupError as exc:
        raise request_failed(str(exc)) from None
    features = ClientFeatures.of(ls.client_capabilities)
    progress = await SessionProgress.open(
        ls,
        client_token=command_work_done_token(),
        may_create=features.work_done_progress,
        message=f"pulling {label}",
    )
    loop = asyncio.get_running_loop()

    def report(event: PullProgress) -> None:
        if progress is not None:
            loop.call_soon_threadsafe(progress.report, _described(label, event))

    try:
        name = await asyncio.to_thread(pull, args.model, report)
    except SetupError as exc:
        if progress is not None:
            progress.end(f"{label} was not pulled")
        raise request_failed(f"{label} was not pulled: {exc}") from None
    if progress is not None:
        progress.end(f"{name} is ready")
    log.info("model %s pulled", name)
    return PullModelResult(model=f"local/{name}").wire()


def _described(name: str, event: PullProgress) -> str:
    done = f"{event.bytes_done / 1e6:,.0f} of {event.bytes_total / 1e6:,.0f} MB"
    if event.phase == "download" and event.parts == 1:
        return f"{name}: downloading ({done})"
    if event.phase == "download":
        return f"{name}: downloading part {event.part}/{event.parts} ({done})"
    if event.phase == "assemble":
        return f"{name}: assembling part {event.part}/{event.parts} ({done})"
    if event.phase == "verify":
        return f"{name}: checking part {event.part}/{event.parts} ({done})"
    return f"{name}: verified"


def register(server: LanguageServer) -> None:
    """Register the picker commands on ``server``."""
    server.command(LIST_MODELS)(list_models)
    server.command(LIST_COMMANDS)(list_commands)
    server.command(PULL_MODEL)(pull_model)
