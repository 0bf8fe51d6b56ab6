"""``cadenza.listModels``, ``cadenza.pullModel`` and ``cadenza.listCommands``: what to pick from."""

from __future__ import annotations

from pydantic import Field

from cadenza.schema.base import SparseWireModel, WireModel


class ListModelsArgs(SparseWireModel):
    """``{sessionId?, rootUri?}`` (may be ``{}``): ``current`` is that session's next turn's."""

    session_id: str | None = Field(default=None, min_length=1)
    root_uri: str | None = Field(default=None, min_length=1)


class ModelItem(WireModel):
    """``{id, label, local, pulled, where}``.

    ``pulled`` is null but for known local models; ``where`` says where the model runs
    (``Ollama at 127.0.0.1:11434``).
    """

    id: str
    label: str
    local: bool
    pulled: bool | None
    where: str = ""


class WorkflowItem(WireModel):
    """``{name, description}``."""

    name: str
    description: str


class CurrentChoice(WireModel):
    """``{model, workflow}``: the session's next turn's (else a new session's) choice."""

    model: str
    workflow: str


class ListModelsResult(WireModel):
    """The result of ``cadenza.listModels``: ``{models, workflows, current}``."""

    models: list[ModelItem] = Field(default_factory=list)
    workflows: list[WorkflowItem] = Field(default_factory=list)
    current: CurrentChoice


class PullModelArgs(WireModel):
    """``{model}``: ``local/NAME`` or ``NAME`` of a known local model, or ``hf:ORG/REPO[:…]``."""

    model: str = Field(min_length=1, max_length=200)


class PullModelResult(WireModel):
    """``{model}``: ``local/NAME``, pulled and verified."""

    model: str


class ListCommandsArgs(SparseWireModel):
    """``{rootUri?}`` (may be ``{}``): the workspace whose prompt files count."""

    root_uri: str | None = Field(default=None, min_length=1)


class CommandItem(WireModel):
    """``{name, description, hint}``: typed as ``/name`` then the hint's text."""

    name: str
    description: str
    hint: str


class ListCommandsResult(WireModel):
    """The result of ``cadenza.listCommands``: ``{commands}``."""

    commands: list[CommandItem] = Field(default_factory=list)


class SessionFix(WireModel):
    """A fix a client can offer as a button: ``{title, command, arguments}`` (a command to run)."""

    title: str
    command: str
    arguments: list[dict[str, str]] = Field(default_factory=list)
