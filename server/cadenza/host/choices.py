"""The model and workflow each session's next turns use, as a face's configure command chose.

A choice applies from the session's next turn on (the turn that runs, or the answer to a
question within it, keeps its model): the face revives the session for its next prompt with
the chosen model and workflow. A choice is checked when it is made (the provider can be set
up, the workflow is in the session folder's catalog), and a refused one changes nothing.
A choice is also written beside the session's transcript (``<sessionId>.choice.json``), so it
survives a restart of the server; without one a stored session goes on with the workflow it
ran last and the model it started with.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.engine.transcript import transcript_path
from cadenza.host.build import find_workflow, workflow_catalog
from cadenza.host.errors import SetupError
from cadenza.host.providers import ProviderPool
from cadenza.providers.registry import resolve_model_name
from cadenza.textio import write_atomic

log = logging.getLogger(__name__)

Choice = tuple[str, str]
"""``(PROVIDER/MODEL, workflow name)``."""


class SessionChoices:
    """The choices made so far, by session id."""

    def __init__(self, directory: Path | None = None) -> None:
        self._by_id: dict[str, Choice] = {}
        self._directory = directory
        """Where transcripts (and choices) are stored (None: the default folder)."""

    def get(self, session_id: str, current: Choice) -> Choice:
        """The session's chosen model and workflow; ``current`` when none was chosen."""
        found = self._by_id.get(session_id) or self._load(session_id)
        return found or current

    def _path(self, session_id: str) -> Path:
        """``<sessions folder>/<sessionId>.choice.json`` (ValueError for an unsafe id)."""
        return transcript_path(session_id, self._directory).with_suffix(".choice.json")

    def _load(self, session_id: str) -> Choice | None:
        try:
            raw = json.loads(self._path(session_id).read_text(encoding="utf-8"))
            found = (str(raw["model"]), str(raw["workflow"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("session %s: its stored model choice is unreadable: %s", session_id, exc)
            return None
        self._by_id[session_id] = found
        return found

    def _save(self, session_id: str, choice: Choice) -> None:
        try:
            data = json.dumps({"model": choice[0], "workflow": choice[1]}).encode()
            write_atomic(self._path(session_id), data)
        except (OSError, ValueError) as exc:  # the choice still holds in this process
            log.warning("session %s: its model choice could not be stored: %s", session_id, exc)

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
        self._save(session_id, (chosen_model, chosen_workflow))
        return chosen_model, chosen_workflow
