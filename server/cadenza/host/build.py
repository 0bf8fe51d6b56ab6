"""Making a session for any face: its workflow, checkpoint, transcript, permissions, engine.

A face says what the session is (``SessionPlan``: id, task, folder, model, workflow, and the
state of a stored session it revives) and brings its editor port and tools; the host does the
rest the same way for every face:

- the workflow comes from the catalog of the session's folder (built-ins, the user's and the
  workspace's ``.cadenza/workflows/*.toml``, read afresh for each lookup so edits apply at
  once; a broken file only matters to a session that asks for it);
- the checkpoint (for undo) is a new one, or the stored one of a revived session, so an undo
  after a restart still puts back what was changed before it;
- the transcript is opened (a new session) or appended to (a revived one); a transcript that
  cannot be written never fails the session (``host.transcripts``);
- the permission gate asks through the editor and remembers "always" answers per workspace;
- the engine ``Session`` gets the settings of its model (``host.settings``) and, when revived,
  its conversation, last end and step count back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cadenza.config import CadenzaConfig
from cadenza.engine.permissions import PermissionGate, PermissionStore
from cadenza.engine.ports import Editor
from cadenza.engine.session import Session
from cadenza.engine.workflows import (
    DEFAULT_WORKFLOW,
    Workflow,
    WorkflowCatalog,
    WorkflowError,
    load_catalog,
)
from cadenza.host.checkpoints import CheckpointError, SessionCheckpoint
from cadenza.host.command_changes import CheckpointedCommands
from cadenza.host.errors import SetupError
from cadenza.host.restore import RestoredState
from cadenza.host.settings import session_settings
from cadenza.host.transcripts import GuardedRecorder, open_transcript, reopen_transcript
from cadenza.host.trust import TrustStore
from cadenza.host.workspace_lock import WorkspaceLock
from cadenza.intel.hosted import HostedCodeIntel
from cadenza.providers.base import Provider
from cadenza.tools.base import ToolError
from cadenza.tools.documents import current_document
from cadenza.tools.registry import ToolRegistry, default_tools, intel_tools
from cadenza.tools.resources import SessionResources

log = logging.getLogger(__name__)

Warn = Callable[[str], None]


def workflow_catalog(root: Path) -> WorkflowCatalog:
    """The workflows of ``root`` (read afresh: edits to workflow files apply at once)."""
    known = frozenset(default_tools().names) | frozenset(t.name for t in intel_tools())
    catalog = load_catalog(root, known_tools=known)
    for problem in catalog.errors.values():
        log.warning("skipping a workflow file: %s", problem)
    return catalog


def find_workflow(catalog: WorkflowCatalog, name: str, *, fallback: bool = False) -> Workflow:
    """The workflow ``name``; with ``fallback``, ``default`` when it is gone or broken now.

    Raises:
        SetupError: Unknown, or its file is invalid (the message names the file and the
            field); never with ``fallback`` unless ``default`` itself is broken.
    """
    try:
        return catalog.get(name)
    except WorkflowError as exc:
        if fallback and name != DEFAULT_WORKFLOW:
            log.warning("workflow %s: %s; going on with %s", name, exc, DEFAULT_WORKFLOW)
            return find_workflow(catalog, DEFAULT_WORKFLOW)
        raise SetupError(str(exc)) from None


def open_checkpoint(
    session_id: str, root: Path, *, revived: bool, base: Path | None = None
) -> SessionCheckpoint | None:
    """The session's checkpoint: the stored one of a revived session, else a new one.

    An unreadable stored checkpoint is a warning, and the session gets a new one. None only
    when the id cannot name a checkpoint folder (the session runs without undo).
    """
    if revived:
        try:
            stored = SessionCheckpoint.load(session_id, base)
        except CheckpointError as exc:
            log.warning("session %s: its checkpoint is unreadable: %s", session_id, exc)
            stored = None
        if stored is not None:
            return stored
    try:
        return SessionCheckpoint.for_session(session_id, root, base)
    except CheckpointError as exc:
        log.warning("session %s runs without undo: %s", session_id, exc)
        return None


@dataclass(frozen=True, kw_only=True)
class SessionPlan:
    """What a session is, before it is made.

    Attributes:
        session_id: Its id (transcript, checkpoint and lock are named after it).
        task: What the person asked for.
        root: Its workspace folder (absolute, resolved).
        model: ``PROVIDER/MODEL``.
        workflow: The workflow its next run follows.
        restored: The state of a stored session it goes on from (None: a new session).
        open_document: The file focused in the editor when the task was given.
    """

    session_id: str
    task: str
    root: Path
    model: str
    workflow: Workflow
    restored: RestoredState | None = None
    open_document: Path | None = None


def open_recorder(plan: SessionPlan, warn: Warn) -> GuardedRecorder | None:
    """The session's transcript: a new one with its ``session_start``, or the stored one.

    Returns:
        The recorder, or None when the file cannot be opened (``warn`` was told why).
    """
    if plan.restored is not None:
        return reopen_transcript(plan.session_id, warn)
    return open_transcript(
        session_id=plan.session_id,
        task=plan.task,
        root=plan.root,
        workflow=plan.workflow.name,
        model=plan.model,
        warn=warn,
    )


def hosted_intel(root: Path, editor: Editor) -> HostedCodeIntel:
    """Language servers for the session, started on demand, reading what Cadenza reads."""

    def read(path: Path) -> str | None:
        try:
            return current_document(editor, path).text
        except ToolError:
            return None

    return HostedCodeIntel(root, read)


def build_session(
    plan: SessionPlan,
    *,
    config: CadenzaConfig,
    provider: Provider,
    editor: Editor,
    tools: ToolRegistry,
    recorder: GuardedRecorder | None,
    checkpoint: SessionCheckpoint | None = None,
    reviews_each_change: bool = False,
    resources: SessionResources | None = None,
) -> tuple[Session, PermissionGate]:
    """The engine session of ``plan``, and the permission gate it asks through.

    Args:
        plan: What the session is.
        config: The configuration its settings come from.
        provider: Its model (``ProviderPool.get``).
        editor: The face's editor port (edits, prompts, events).
        tools: Its tools (a face may replace some with its client's own).
        recorder: Its transcript (``open_recorder``).
        checkpoint: Its checkpoint (``open_checkpoint``, also its editor's): the files its
            commands change are recorded there too, each command alone in the workspace
            (``host.workspace_lock``; None: not recorded, nothing locked).
        reviews_each_change: The person reviews each change before it is written (the face
            says; ``SessionSettings.reviews_each_change``).
        resources: What its tools hold, kept by the face beyond the session (its language
            servers are taken from there when they were started before); None: its own.
    """
    settings = session_settings(config, plan.model)
    settings.trusted_folder = TrustStore().decision(plan.root) == "trusted"
    settings.reviews_each_change = reviews_each_change
    gate = PermissionGate(
        editor,
        store=PermissionStore(plan.root),
        gated=settings.gated_tools,
        timeout_s=settings.permission_timeout_s,
        rules=config.permissions.rule_set(),
    )
    restored = plan.restored
    if recorder is not None:  # the person's turns mark the files' states (restoring a turn)
        recorder.turns = restored.turns if restored is not None else 0
        if checkpoint is not None:
            checkpoint.person_turn = recorder.turns
            recorder.on_turn = checkpoint.begin_person_turn
    intel = (
        hosted_intel(plan.root, editor)
        if resources is None
        else resources.get(HostedCodeIntel, lambda: hosted_intel(plan.root, editor))
    )
    session = Session(
        session_id=plan.session_id,
        task=plan.task,
        root=plan.root,
        provider=provider,
        editor=editor,
        tools=tools,
        settings=settings,
        workflow=plan.workflow,
        recorder=recorder,
        permissions=gate,
        history=restored.history if restored is not None else None,
        last=restored.last if restored is not None else None,
        stopped_in=restored.stopped_in if restored is not None else None,
        open_document=plan.open_document,
        intel=intel,
        command_watch=None
        if checkpoint is None
        else CheckpointedCommands(
            checkpoint, lock=WorkspaceLock(plan.root, session_id=plan.session_id)
        ),
        resources=resources,
    )
    session.resources.get(HostedCodeIntel, lambda: intel)  # its servers close with its resources
    if restored is not None:
        session.restore_steps(restored.steps)
        session.restore_tests(restored.tests_allowed, restored.tests_declined)
        session.restore_call_ids(restored.call_ids)
        session.restore_seen(restored.seen)
    return session, gate
