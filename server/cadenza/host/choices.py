"""The model and workflow each session's next turns use, as a face's configure command chose.

A choice applies from the session's next turn on (the turn that runs, or the answer to a
question within it, keeps its model): the face revives the session for its next prompt with
the chosen model and workflow. A choice is checked when it is made (the provider can be set
up, the workflow is in the session folder's catalog), and a refused one changes nothing.
Choices live in this process: after a restart a session goes on with the workflow it ran last
and the model it started with.
"""

from __future__ import annotations

from pathlib import Path

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.host.build import find_workflow, workflow_catalog
from cadenza.host.errors import SetupError
from cadenza.host.providers import ProviderPool
from cadenza.providers.registry import resolve_model_name

Choice = tuple[str, str]
"""``(PROVIDER/MODEL, workflow name)``."""


class SessionChoices:
    """The choices made so far, by session id."""

    def __init__(self) -> None:
        self._by_id: dict[str, Choice] = {}

    def get(self, session_id: str, current: Choice) -> Choice:
        """The session's chosen model and workflow; ``current`` when none was chosen."""
        return self._by_id.get(session_id, current)

    def choose(
        self,
        session_id: str,
        current: Choice,
        *,
        root: Path,
        model: str | None,
        workflow: str | None,
        config: CadenzaConfig,
        providers: ProviderPool,
    ) -> Choice:
        """Choose a model and/or workflow for the session's next turns; the choice now.

        Raises:
            SetupError: The model cannot be set up or the workflow is unknown or invalid.
        """
        chosen_model, chosen_workflow = self.get(session_id, current)
        if model is not None:
            try:
                chosen_model = resolve_model_name(model, config)
            except ConfigError as exc:
                raise SetupError(str(exc)) from None
            providers.get(chosen_model, config)
        if workflow is not None:
            chosen_workflow = find_workflow(workflow_catalog(root), workflow).name
        self._by_id[session_id] = (chosen_model, chosen_workflow)
        return chosen_model, chosen_workflow
