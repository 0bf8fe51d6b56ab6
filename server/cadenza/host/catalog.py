"""What a person can pick for a session: models and workflows, as both faces' pickers list them.

Models: the configured default, the names listed in the ``models`` setting, the session's own
(current) model, the models the person's own servers have (Ollama, LM Studio, ...:
``providers.served``), and every known local model (pinned, from the Hub, or from the catalog
file) with whether it is pulled (``cadenza models pull``); other models have no ``pulled``. Each
says where it runs. Workflows: the built-in ones and the workspace's. A known local model or a
Hub reference is pulled with ``pull`` (the download of ``cadenza models pull``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.host.build import workflow_catalog
from cadenza.host.errors import SetupError
from cadenza.providers.hub import is_hub_ref
from cadenza.providers.model_catalog import MODELS, ModelError, ModelSpec
from cadenza.providers.model_sources import get_spec, known_models
from cadenza.providers.models import PullProgress, model_path, pull_named
from cadenza.providers.registry import resolve_model_name, split_model_name
from cadenza.providers.served import NAMES, ServedModel, served_models

LOCAL = "local"
EMBEDDED = "this machine (embedded llama.cpp)"
log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ModelChoice:
    """One model a picker offers.

    Attributes:
        id: ``PROVIDER/MODEL``.
        label: What the picker shows: the model, where it runs (``local``, the server's
            name such as ``Ollama``, or the provider) and ``default`` for the default one.
        local: Served by the embedded llama.cpp (``local/…``).
        pulled: For a known local model, whether its file is here; None for the others.
        where: Where it runs: the embedded server, a server of the person's
            (``Ollama at 127.0.0.1:11434``), or the provider's name.
    """

    id: str
    label: str
    local: bool
    pulled: bool | None
    where: str


@dataclass(frozen=True, kw_only=True)
class WorkflowChoice:
    """One workflow (mode) a picker offers: its name and one line about it."""

    name: str
    description: str


def default_model(config: CadenzaConfig) -> str:
    """The model a session gets when none is named."""
    return resolve_model_name(None, config)


def model_choices(
    config: CadenzaConfig, current: str | None = None, served: Sequence[ServedModel] = ()
) -> list[ModelChoice]:
    """The models to offer, the default first, each once.

    Args:
        config: The settings (default model, ``models``).
        current: The session's own model.
        served: What the person's servers have (``providers.served.served_models``).
    """
    names: list[str] = []
    for name in (default_model(config), current, *config.models):
        if name is None:
            continue
        try:
            names.append(resolve_model_name(name, config))
        except ConfigError:
            continue  # a malformed name in the settings: the settings warn about it
    wheres = {m.id: m.where for m in served}
    names += list(wheres)
    local = _local_models()
    names += [f"{LOCAL}/{name}" for name in local]
    default = names[0]  # the configured default comes first
    return [_choice(name, local, wheres, name == default) for name in dict.fromkeys(names)]


async def offered_models(config: CadenzaConfig, current: str | None = None) -> list[ModelChoice]:
    """``model_choices`` with what the person's own servers have now (asked each time)."""
    return model_choices(config, current, await served_models(config))


def _local_models() -> dict[str, ModelSpec]:
    """The known local models; the pinned ones when the catalog file is malformed.

    A picker still lists something then; pulling or starting a model says what is wrong.
    """
    try:
        return known_models()
    except ModelError as exc:
        log.warning("%s", exc)
        return dict(MODELS)


def _choice(
    name: str, local: dict[str, ModelSpec], wheres: dict[str, str], default: bool
) -> ModelChoice:
    provider, model = split_model_name(name)
    if provider != LOCAL:
        runs = NAMES.get(provider, provider) if name in wheres else provider
        return ModelChoice(
            id=name,
            label=_label(model, runs, default),
            local=False,
            pulled=None,
            where=wheres.get(name, provider),
        )
    spec = local.get(model)
    pulled = None if spec is None else model_path(spec) is not None
    return ModelChoice(
        id=name, label=_label(model, LOCAL, default), local=True, pulled=pulled, where=EMBEDDED
    )


def _label(model: str, runs: str, default: bool) -> str:
    """A picker's line: the model, where it runs, whether it is the default.

    ``qwen2.5-coder-1.5b (local, default)``, ``llama3.2:3b (Ollama)``, ``gpt-4.1 (openai)``.
    """
    return f"{model} ({runs}, default)" if default else f"{model} ({runs})"


def workflow_choices(root: Path) -> list[WorkflowChoice]:
    """The workflows of the workspace ``root`` (the built-in, user and workspace ones), by name."""
    catalog = workflow_catalog(root)
    return [
        WorkflowChoice(name=name, description=workflow.description)
        for name, workflow in sorted(catalog.workflows.items())
    ]


def missing_local_model(model: str) -> str | None:
    """The known local model ``model`` names when it is not pulled yet; None otherwise."""
    try:
        provider, name = split_model_name(model)
    except ConfigError:
        return None
    spec = _local_models().get(name) if provider == LOCAL else None
    if spec is not None and model_path(spec) is None:
        return name
    return None


def pull_label(ref: str) -> str:
    """What the pull of ``ref`` (a known local model, or a Hub reference ``hf:…``) is called.

    Raises:
        SetupError: An unknown model, or a malformed catalog file (the message says what to do).
    """
    try:
        return ref if is_hub_ref(ref) else get_spec(ref).name
    except ModelError as exc:
        raise SetupError(str(exc)) from None


def pull(ref: str, progress: Callable[[PullProgress], None]) -> str:
    """Download ``ref`` (blocking: a worker thread's job), telling ``progress``; its local name.

    Raises:
        SetupError: Unknown, or the download failed (the message says why).
    """
    try:
        name, _path = pull_named(ref, progress=progress)
    except ModelError as exc:
        raise SetupError(str(exc)) from None
    return name
