"""The ACP session's configuration options, slash commands and what they change.

``session/new`` and ``session/load`` answer with ``configOptions``: a model selector
(``category: "model"``: the models of ``host.catalog``) and the mode (``category: "mode"``:
the workflows, the same as ``modes``). ``session/set_config_option`` changes either for the
session's next turn (a running turn keeps its own); the choice is stored with the session
(``host.choices``), so a reloaded session keeps it. ``available_commands_update`` lists the
slash commands (``host.commands``): the workflows and ``.cadenza/commands/*.md``.
"""

from __future__ import annotations

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    UnstructuredCommandInput,
)

from cadenza.acp.session import AcpSession, request_error
from cadenza.host.build import find_workflow, workflow_catalog
from cadenza.host.catalog import ModelChoice, offered_models, workflow_choices
from cadenza.host.commands import slash_commands
from cadenza.host.errors import SetupError
from cadenza.host.ports import DEFAULT_WORKFLOW
from cadenza.host.service import SessionService

MODEL = "model"
MODE = "mode"


def _described(model: ModelChoice) -> str | None:
    """A model option's description: how to pull a local one, or the server it runs on."""
    if model.pulled is False:
        return f"not pulled yet: run `cadenza models pull {model.id.removeprefix('local/')}`"
    return model.where if not model.local and model.where not in model.label else None


async def config_options(
    live: AcpSession,
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The session's options now: its model (its servers' too: Ollama, ...) and its mode."""
    models = await offered_models(live.config, live.model)
    workflows = sorted(
        workflow_choices(live.root), key=lambda w: (w.name != DEFAULT_WORKFLOW, w.name)
    )
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODEL,
            name="Model",
            description="The model of the session's next turns",
            category="model",
            current_value=live.model,
            options=[
                SessionConfigSelectOption(value=m.id, name=m.label, description=_described(m))
                for m in models
            ],
        ),
        SessionConfigOptionSelect(
            type="select",
            id=MODE,
            name="Mode",
            description="The workflow of the session's next turns",
            category="mode",
            current_value=live.workflow.name,
            options=[
                SessionConfigSelectOption(
                    value=w.name, name=w.name, description=w.description or None
                )
                for w in workflows
            ],
        ),
    ]


def set_option(
    live: AcpSession,
    config_id: str,
    value: str | bool,
    service: SessionService[None],
) -> None:
    """Set the model or the mode of the session's next turns; the choice is stored.

    Raises:
        RequestError: An unknown option, a value that is not a string, an unknown model or
            workflow (nothing changed).
    """
    if config_id not in (MODEL, MODE):
        raise request_error(f"unknown configuration option {config_id!r}; known: model, mode")
    if not isinstance(value, str):
        raise request_error(f"the {config_id} option takes a string value")
    try:
        model, workflow = service.choose(
            live.session_id,
            (live.model, live.workflow.name),
            root=live.root,
            model=value if config_id == MODEL else None,
            workflow=value if config_id == MODE else None,
            config=live.config,
        )
        live.workflow = find_workflow(workflow_catalog(live.root), workflow)
    except SetupError as exc:
        raise request_error(str(exc)) from None
    live.model = model


def commands_update(live: AcpSession) -> AvailableCommandsUpdate:
    """``available_commands_update``: the session's slash commands."""
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            AvailableCommand(
                name=c.name,
                description=c.description,
                input=AvailableCommandInput(UnstructuredCommandInput(hint=c.hint))
                if c.hint
                else None,
            )
            for c in slash_commands(live.root)
        ],
    )
