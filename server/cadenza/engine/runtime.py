"""The state one session's movements share, and the two ways it changes: messages and events.

Every message appended to the live history and every event published goes through here, so
the transcript sees exactly what the model and the editor saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cadenza.engine.budget import RunClock
from cadenza.engine.call_ids import CallIds
from cadenza.engine.context import ContextManager
from cadenza.engine.events import SessionEvent, file_edited
from cadenza.engine.permissions import DEFAULT_GATED, DEFAULT_TIMEOUT_S, PermissionGate
from cadenza.engine.ports import CommandChange, CommandWatch, Editor
from cadenza.engine.stuck import StuckDetector
from cadenza.engine.testsuite import SuiteRun
from cadenza.engine.variants import API_LOOP, LoopSettings
from cadenza.engine.workflows import Workflow
from cadenza.messages import Message, UserMessage
from cadenza.providers.base import Provider, ToolChoice
from cadenza.tools.dispatch.cache import ReadCache
from cadenza.tools.intel import CodeIntel
from cadenza.tools.registry import ToolRegistry
from cadenza.tools.resources import SessionResources


class Recorder(Protocol):
    """Receives every message and event of a session (the transcript)."""

    def on_message(self, message: Message) -> None:
        """A message was appended to the live history."""
        ...

    def on_event(self, event: SessionEvent) -> None:
        """An event was published."""
        ...

    def on_checkpoint(self, movement: str, note: str) -> None:
        """A movement ended with this memory checkpoint."""
        ...


@dataclass(kw_only=True)
class SessionSettings:
    """Per-session knobs.

    Attributes:
        max_steps: Model requests allowed in the whole session (stop reason ``max_steps``).
        system_prompt: Template (``engine.prompt.system_prompt``); one with ``{overview}``
            lists the workspace itself, else a workspace message follows it.
        max_tokens: Completion bound per model request (tokens), or None.
        temperature: Sampling temperature, or None for the provider's default.
        first_step_tool_choice: Tool choice of the session's first model request.
            ``required`` (the default) makes the model look before it answers, so it cannot
            claim a change it never made; later requests are ``auto``.
        context_size: The model's context window (tokens), for context pressure.
        gated_tools: Tools that ask the person before each call (``PermissionGate``).
        permission_timeout_s: How long a permission prompt waits for an answer (seconds).
        loop: The loop variant (``cadenza.engine.variants``).
        test_command: The command the done check ``tests`` runs (``[checks] test``); None:
            detected from the workspace (``engine.testsuite``); "": no test check.
        test_timeout_s: How long that command may run (seconds) before it is stopped.
        time_budget_s: Wall time each run may take (seconds; ``engine.budget.RunClock``), or
            None: no bound but ``max_steps``.
        trusted_folder: The person trusts the workspace folder (``host.trust``): the
            commands the agent runs may run the programs its git configuration names.
        reviews_each_change: The person reviews each change before it is written (the LSP
            face's review mode ``confirm``): no candidate reply is tried on a copy, since its
            test run would run code nobody reviewed.
    """

    max_steps: int = 25
    system_prompt: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    first_step_tool_choice: ToolChoice = "required"
    context_size: int = 8192
    gated_tools: frozenset[str] = frozenset(DEFAULT_GATED)
    permission_timeout_s: float = DEFAULT_TIMEOUT_S
    loop: LoopSettings = API_LOOP
    test_command: str | None = None
    test_timeout_s: float = 120.0
    time_budget_s: float | None = None
    trusted_folder: bool = False
    reviews_each_change: bool = False


@dataclass(kw_only=True)
class Runtime:
    """What the movements of one session share."""

    session_id: str
    root: Path
    workflow: Workflow
    provider: Provider
    editor: Editor
    tools: ToolRegistry
    settings: SessionSettings
    context: ContextManager
    messages: list[Message]
    permissions: PermissionGate
    recorder: Recorder | None = None
    steps: int = 0
    run_start: int = 0
    """``steps`` when the current run began: each run (a resume too) has ``max_steps``."""
    resources: SessionResources = field(default_factory=SessionResources)
    stuck: StuckDetector = field(default_factory=StuckDetector)
    cache: ReadCache = field(default_factory=ReadCache)
    task_files: list[str] = field(default_factory=list)
    """Workspace files the task is about (``engine.prime.task_files``), primed under
    ``LoopSettings.prime``."""
    changed: list[str] = field(default_factory=list)
    """Workspace-relative names of the files changed in the session, in order (repeats
    kept): the done check "nothing changed" reads it."""
    commands_ran: int = 0
    """Calls that may change files without saying which (a command, an MCP tool) and
    succeeded: "nothing changed" cannot be claimed after one."""
    declined: set[str] = field(default_factory=set)
    """Ids of the calls the person did not allow (``ToolResult.declined``): the done checks
    never ask the model to make a change the person declined."""
    renames: dict[str, str] = field(default_factory=dict)
    """Old name → new name of each rename the task is about (``leftovers.task_rename``): the
    done check looks for the old names across the workspace."""
    shown: dict[Path, str] = field(default_factory=dict)
    """Files whose whole text the model was shown, each with the digest of that text
    (``ToolContext.shown``; the text edit format lets a file block replace only those)."""
    written: dict[Path, str] = field(default_factory=dict)
    """Each file the session changed (absolute path) → its text after the session's last
    edit: the test check compares it with the disk, where the tests read."""
    tests_declined: str = ""
    """Why the done check ``tests`` may not run its command (the person did not allow it):
    it is not asked again in the session."""
    tests_allowed: str = ""
    """The test command the person allowed for the session ("" none): that command is not
    asked about again; another one (the workspace changed what is detected) is."""
    tests_ran_on: tuple[tuple[str, str], ...] | None = None
    """The changed files' texts the tests last ran on after a change (None once a command
    ran since): the same state is not run twice, and the done check takes that run."""
    tests_last: SuiteRun | None = None
    """That run's result."""
    tests_verdict: str = ""
    """The counts of the last test run after a change (``2 failed, 5 passed``), for the end
    message of a run stopped by its time budget."""
    clock: RunClock = field(default_factory=RunClock)
    """The current run's wall time against ``SessionSettings.time_budget_s``."""
    intel: CodeIntel | None = None
    """The language servers Cadenza started for the session (used when the editor offers
    none), or None."""
    command_watch: CommandWatch | None = None
    """Records the files a command changes (the host's checkpoint), or None: not recorded."""
    rules_shown: set[str] = field(default_factory=set)
    """Nested AGENTS.md files already shown in an edit's result (``rules.nested_rules``)."""
    steers: list[str] = field(default_factory=list)
    """What the person sent into the running turn (``Session.steer``), not yet in the history:
    the loop takes it in at the next step boundary."""
    call_ids: CallIds = field(init=False)
    """Every tool-call id the session used (a restored history's too): ids stay unique."""

    def __post_init__(self) -> None:
        self.call_ids = CallIds(self.messages)

    def append(self, message: Message) -> None:
        """Append to the live history (and the transcript)."""
        self.messages.append(message)
        if self.recorder is not None:
            self.recorder.on_message(message)

    def take_steers(self) -> None:
        """Append what the person sent into the turn to the history, as user messages."""
        steers, self.steers = self.steers, []
        for text in steers:
            self.append(UserMessage(tag="steer", content=text))

    def publish(self, event: SessionEvent) -> None:
        """Publish to the editor (and the transcript)."""
        if self.recorder is not None:
            self.recorder.on_event(event)
        self.editor.publish(event)

    def command_changed(self, call_id: str, changes: list[CommandChange]) -> None:
        """Record and publish the files a command changed on disk, as edits of ``call_id``."""
        for change in changes:
            path = self.root / change.path
            if change.deleted:
                self.written.pop(path, None)
            elif path in self.written:  # the test check compares it with the disk
                self.written[path] = change.new_text
            self.publish(file_edited(call_id, change.path, change.old_text, change.new_text))
