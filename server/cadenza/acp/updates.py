"""Engine events → ACP ``session/update`` payloads (the SDK's schema models), and replays.

- ``AgentMessageChunk`` → ``agent_message_chunk``;
- ``ToolCallStarted`` → ``tool_call`` (``kind`` = the tool's ACP kind, ``in_progress`` —
  ``pending`` for a gated tool, which waits for the person —, ``rawInput`` = the arguments
  as parsed JSON);
- ``PermissionDecided`` allowed → ``tool_call_update`` ``in_progress`` (the call runs now);
- ``ToolCallFinished`` → ``tool_call_update`` (``completed``/``failed``, the call's diffs
  again and the result as text content);
- ``FileEdited`` → ``tool_call_update`` with ``diff`` content (absolute path, old and new
  text; no status: the call still runs);
- ``WorkspaceWaited`` → ``tool_call_update`` with text content (whom the call waits for;
  no status);
- ``MovementStarted`` of a workflow with several movements → ``plan`` (one entry per
  movement; the end of a successful run completes it);
- ``PlanUpdated`` (the agent's ``update_plan``) → ``plan`` with its entries; from then on
  in the run the agent's own list replaces the movements' one;
- the rest (steps, cache lookups, checkpoints, permissions, the end) has no ACP update; the
  prompt's response carries the stop reason.

``replay_updates`` turns a stored transcript into the same updates, plus the person's
messages as ``user_message_chunk`` (a later prompt as the person typed it: the
``session_resume`` event's ``reply``, not the ``answer`` message the engine wrote for the
model around it) and the assistant's whole replies as
``agent_message_chunk`` and each run's final message as it was sent live (``turns``), for
``session/load``. Pure functions: no I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import assert_never

from acp import (
    plan_entry,
    start_tool_call,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import text_block
from acp.schema import (
    AgentMessageChunk as AcpAgentMessageChunk,
)
from acp.schema import (
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    PlanEntryStatus,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from cadenza.acp.turns import final_message
from cadenza.host.ports import (
    Activity,
    AgentMessageChunk,
    CandidatesTried,
    CheckpointWritten,
    CheckRan,
    ContextCompacted,
    ContractRepaired,
    EventRecord,
    FileEdited,
    FilesSeen,
    MessageRecord,
    ModelReplied,
    MovementStarted,
    PermissionDecided,
    PlanUpdated,
    RulesLoaded,
    SessionEvent,
    SessionFinished,
    SessionResumed,
    StepStarted,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
    TranscriptRecord,
    Workflow,
    WorkspaceWaited,
)
from cadenza.messages import AssistantMessage, Message, UserMessage
from cadenza.schema.updates import Candidates, raw_input

AcpUpdate = (
    UserMessageChunk
    | AcpAgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | UsageUpdate
    | AvailableCommandsUpdate
)
"""The ``session/update`` kinds Cadenza sends."""

PERSON_TAGS = frozenset({"task", "answer", "steer"})
"""User messages the person wrote (the rest are Cadenza's own: movements, checkpoints)."""


class UpdateMapper:
    """Maps one session's events to updates, in order.

    ACP's ``tool_call_update`` *replaces* a call's content, so the diffs a call produced are
    kept and repeated in the update that finishes it (the diff stays visible after the
    call completes).

    Args:
        root: The session's workspace root (diff paths are made absolute against it).
    """

    def __init__(self, root: Path, workflows: Mapping[str, Workflow] | None = None) -> None:
        self.root = root
        self.workflows: Mapping[str, Workflow] = workflows or {}
        """Workflows by name: a run of one with several movements shows them as a plan."""
        self.asks: Callable[[str], bool] | None = None
        """Whether a call of a tool waits for a permission (its ``tool_call`` is ``pending``
        until it is allowed); None: none waits."""
        self._diffs: dict[str, list[FileEditToolCallContent]] = {}
        self._terminals: dict[str, list[TerminalToolCallContent]] = {}
        self._plan: Workflow | None = None
        self._own_plan = False
        """The agent sent its own plan in this run: the movements' plan is no longer sent."""
        self._ran: dict[str, None] = {}

    def update(self, event: SessionEvent) -> AcpUpdate | None:
        """The ``session/update`` payload for ``event``, or None when ACP has none.

        An exhaustive ``match`` over the engine's events: a new event kind is a type error
        here until it is given its update (or None).
        """
        match event:
            case MovementStarted() | SessionFinished():
                return self._plan_update(event)
            case PlanUpdated():
                self._own_plan = True
                return update_plan([plan_entry(e.content, status=e.status) for e in event.entries])
            case AgentMessageChunk():
                return update_agent_message_text(event.text)
            case RulesLoaded() if not event.files:
                return None  # no rule files: nothing to tell the person
            case CheckRan() | RulesLoaded():
                return update_agent_thought_text(_note(event))
            case CandidatesTried():
                return update_agent_thought_text(candidates_line(event))
            case (
                ToolCallStarted()
                | PermissionDecided()
                | ToolCallFinished()
                | FileEdited()
                | WorkspaceWaited()
            ):
                return self._call_update(event)
            case (
                StepStarted()
                | Activity()
                | ModelReplied()
                | ContractRepaired()
                | ToolCacheLookup()
                | ContextCompacted()
                | CheckpointWritten()
                | FilesSeen()
                | SessionResumed()
            ):
                return None
            case _:
                assert_never(event)

    def _call_update(
        self,
        event: ToolCallStarted
        | PermissionDecided
        | ToolCallFinished
        | FileEdited
        | WorkspaceWaited,
    ) -> ToolCallStart | ToolCallProgress | None:
        """``tool_call`` or ``tool_call_update`` of one call (None: a call not allowed)."""
        match event:
            case ToolCallStarted():
                gated = self.asks is not None and self.asks(event.name)
                return start_tool_call(
                    event.tool_call_id,
                    event.title,
                    kind=event.tool_kind,
                    status="pending" if gated else "in_progress",
                    raw_input=raw_input(event.raw_input),
                )
            case PermissionDecided():
                if event.verdict != "allowed":
                    return None  # its tool_call_update (failed) follows
                return update_tool_call(event.tool_call_id, status="in_progress")
            case ToolCallFinished():
                diffs = self._diffs.pop(event.tool_call_id, [])
                terminals = self._terminals.pop(event.tool_call_id, [])
                content: list[
                    FileEditToolCallContent | TerminalToolCallContent | ContentToolCallContent
                ] = [*terminals, *diffs]
                content.append(tool_content(text_block(event.content)))
                return update_tool_call(event.tool_call_id, status=event.status, content=content)
            case FileEdited():
                diffs = self._diffs.setdefault(event.tool_call_id, [])
                diffs += acp_diffs(event, self.root)
                return update_tool_call(event.tool_call_id, content=list(diffs))
            case WorkspaceWaited():
                return update_tool_call(
                    event.tool_call_id, content=[tool_content(text_block(event.text))]
                )
            case _:
                assert_never(event)

    def terminal(self, tool_call_id: str, terminal_id: str) -> ToolCallProgress:
        """``tool_call_update`` embedding a client terminal in the call (kept to its end)."""
        terminals = self._terminals.setdefault(tool_call_id, [])
        terminals.append(tool_terminal_ref(terminal_id))
        return update_tool_call(tool_call_id, content=list(terminals))

    def _plan_update(self, event: MovementStarted | SessionFinished) -> AgentPlanUpdate | None:
        """``plan``: the workflow's movements, one entry each, for multi-movement workflows.

        A movement that ran in this run is ``completed``, the one that runs ``in_progress``,
        the rest ``pending``; when the run ends with ``end_turn`` the movements it ran are all
        ``completed``. A movement run again (``implement`` after ``review``) is in progress
        again.
        """
        if isinstance(event, MovementStarted) and event.index == 1:
            self._own_plan = False  # a new run
        if self._own_plan:
            return None
        if isinstance(event, MovementStarted):
            workflow = self.workflows.get(event.workflow)
            if workflow is None or len(workflow.movements) < 2:
                self._plan = None
                return None
            if event.index == 1 or self._plan is not workflow:
                self._ran = {}
            self._plan = workflow
            self._ran.pop(event.movement, None)
            self._ran[event.movement] = None
            return self._entries(current=event.movement)
        if self._plan is None or event.stop_reason != "end_turn":
            return None
        return self._entries(current=None)

    def _entries(self, current: str | None) -> AgentPlanUpdate:
        assert self._plan is not None
        entries: list[PlanEntry] = []
        for movement in self._plan.movements:
            status: PlanEntryStatus = "pending"
            if movement.name == current:
                status = "in_progress"
            elif movement.name in self._ran:
                status = "completed"
            summary = first_sentence(movement.instructions)
            text = f"{movement.name}: {summary}" if summary else movement.name
            entries.append(plan_entry(text, status=status))
        return update_plan(entries)


def acp_diffs(event: FileEdited, root: Path) -> list[FileEditToolCallContent]:
    """ACP ``diff`` contents of one edit: the whole texts, or one per hunk (a large file).

    A hunk's ``oldText``/``newText`` are the changed lines with up to 3 lines around them (as
    other agents send an edit's old and new strings); ``_meta.cadenza`` says where they start
    (``oldLine``, ``newLine``: 0-based lines of the file before and after).
    """
    path = str(root / event.path)
    if event.hunks is None:
        return [tool_diff_content(path, new_text=event.new_text, old_text=event.old_text)]
    return [
        FileEditToolCallContent(
            type="diff",
            path=path,
            old_text=h.old_text,
            new_text=h.new_text,
            field_meta={"cadenza": {"oldLine": h.old_line, "newLine": h.new_line}},
        )
        for h in event.hunks
    ]


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of ``text``'s first paragraph, lines joined, bounded.

    Longer than ``limit`` characters: cut after a whole word, with an ellipsis.
    """
    paragraph = " ".join(re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0].split())
    sentence = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1]
    if sentence[limit - 1] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]  # not in the middle of a word
    return cut.rstrip(" ,;:") + "…"


def person_text(message: UserMessage, reply: str | None) -> str | None:
    """What the person wrote of a user message, or None (Cadenza's own messages).

    An ``answer`` (a later prompt) is the ``reply`` of the ``session_resume`` before it: the
    person's text, without the wording the engine puts around it for the model.
    """
    if message.tag == "answer" and reply is not None:
        return reply if reply.strip() else None
    return message.content if message.tag in PERSON_TAGS else None


class _Replay:
    """The state of one replay: the updates so far, the step's text, the pending reply."""

    def __init__(self, root: Path, workflows: Mapping[str, Workflow] | None) -> None:
        self.updates: list[AcpUpdate] = []
        self.mapper = UpdateMapper(root, workflows)
        self.said = ""  # the assistant text of the current step, as ``AcpEditor.step_text``
        self.reply: str | None = None  # the person's text of the last ``session_resume``

    def message(self, message: Message) -> None:
        if isinstance(message, UserMessage):
            person = person_text(message, self.reply)
            if message.tag == "answer":
                self.reply = None
            if person:
                self.updates.append(update_user_message_text(person))
        elif isinstance(message, AssistantMessage) and message.content:
            self.said = message.content
            self.updates.append(update_agent_message_text(message.content))

    def event(self, event: SessionEvent) -> None:
        if isinstance(event, StepStarted):
            self.said = ""
        elif isinstance(event, SessionResumed):
            self.reply = event.reply
        update = self.mapper.update(event)
        if update is not None:
            self.updates.append(update)
        if isinstance(event, SessionFinished):
            final = final_message(event.stop_reason, event.message, self.said, event.missing_info)
            if final is not None:
                self.updates.append(update_agent_message_text(final))


def replay_updates(
    records: Iterable[TranscriptRecord],
    root: Path,
    workflows: Mapping[str, Workflow] | None = None,
) -> list[AcpUpdate]:
    """The updates that show a stored session again, in transcript order.

    Args:
        records: The session's transcript records.
        root: Its workspace root (diff paths are made absolute against it).
        workflows: The workflows by name (plans of multi-movement runs).
    """
    replay = _Replay(root, workflows)
    for record in records:
        if isinstance(record, MessageRecord):
            replay.message(record.message)
        elif isinstance(record, EventRecord):
            replay.event(record.event)
    return replay.updates


def candidates_line(event: CandidatesTried) -> str:
    """A step's candidates as a line of the agent's thoughts (the ``candidates`` wording)."""
    update = Candidates(
        step=event.step,
        tried=event.tried,
        kept=event.kept,
        passed=event.passed,
        why=event.why,
        of=event.of,
    )
    return update.line()


def _note(event: CheckRan | RulesLoaded) -> str:
    """A done check or the loaded project rules as a line of the agent's thoughts.

    ACP has no update kind of its own for them.
    """
    if isinstance(event, RulesLoaded):
        loaded = ", ".join(event.files)
        cut = f" (cut to fit: {', '.join(event.truncated)})" if event.truncated else ""
        return f"Project rules: {loaded}{cut}."
    verdict = "passed" if event.status == "passed" else f"{event.status}: {event.detail}"
    return f"Check {event.name} {verdict}"
