"""Typed session events: everything that happens in a session, as one pydantic union.

The editor faces turn them into notifications (``cadenza/sessionUpdate`` with ACP's update
kinds, work-done progress); the transcript stores them as JSONL through the same adapter.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from cadenza.messages import FinishReason
from cadenza.schema.outcome import SessionOutcome
from cadenza.secrets import redact, register_known_keys
from cadenza.tools.base import ToolKind
from cadenza.tools.hunks import text_hunks
from cadenza.types import StopReason, ToolStatus

Observation = Literal["repeat", "cut", "invalid", "not_allowed"]
"""Why the engine answered a call itself instead of running it: an identical repeat (the stuck
detector), arguments cut by the token limit, arguments that fail the tool's schema, a tool the
movement does not offer."""


class StepStarted(BaseModel):
    """A model request is about to leave (step numbers start at 1).

    ``step`` counts the session's requests (a restore reads it back); ``run_step`` this run's
    (each turn has ``max_steps`` of its own); 0 in transcripts older than it.
    """

    kind: Literal["step"] = "step"
    step: int
    max_steps: int
    run_step: int = 0
    elapsed_s: float = 0.0
    """The run's counted wall time so far (seconds)."""
    budget_s: float | None = None
    """The run's time budget (seconds), or None."""


class Activity(BaseModel):
    """What the session does while a step runs: the model writing its reply.

    A progress line (work-done progress), not a session update. ``step`` counts this run's
    requests (``StepStarted.run_step``); ``doing`` is what the model writes, for the person
    (``writing an edit``); ``tokens`` the reply's stream deltas so far (one token each on
    llama.cpp); ``elapsed_s`` and ``budget_s`` as in ``StepStarted``.
    """

    kind: Literal["activity"] = "activity"
    step: int
    max_steps: int
    doing: str
    tokens: int
    elapsed_s: float = 0.0
    budget_s: float | None = None


class MovementStarted(BaseModel):
    """A movement of the workflow starts (``index`` counts movements run, from 1)."""

    kind: Literal["movement"] = "movement"
    workflow: str
    movement: str
    index: int
    reason: str = ""


class ToolCacheLookup(BaseModel):
    """A read-only call was answered from the cache (``hit``) or had to run (a miss)."""

    kind: Literal["tool_cache"] = "tool_cache"
    tool_call_id: str
    name: str
    hit: bool


class ContextCompacted(BaseModel):
    """Older turns were summarized to relieve context pressure (token counts before/after)."""

    kind: Literal["compaction"] = "compaction"
    tokens_before: int
    tokens_after: int
    messages_summarized: int


class CheckpointWritten(BaseModel):
    """A memory checkpoint at the end of a movement: what was done and what is next."""

    kind: Literal["checkpoint"] = "checkpoint"
    movement: str
    note: str


class AgentMessageChunk(BaseModel):
    """Assistant text, streamed or whole."""

    kind: Literal["agent_message_chunk"] = "agent_message_chunk"
    text: str


class ToolCallStarted(BaseModel):
    """The model called a tool (ACP ``tool_call``)."""

    kind: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    title: str
    tool_kind: ToolKind
    raw_input: str


class ToolCallFinished(BaseModel):
    """A tool call finished (ACP ``tool_call_update``); ``content`` is what the model reads."""

    kind: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolStatus
    content: str
    observation: Observation | None = None
    """Set when the engine answered the call instead of running it."""
    summary: str = ""
    """What the person reads of the result when ``content`` speaks to the model
    (``ToolResult.summary``); "": the content says it."""


class WorkspaceWaited(BaseModel):
    """A tool call waits: another session runs a command, or edits, in the same workspace.

    ``holder`` says whom it waits for, e.g. ``session abc (process 12) is running `make```.
    The call's own ``tool_call_update`` follows once it ran.
    """

    kind: Literal["workspace_wait"] = "workspace_wait"
    tool_call_id: str
    holder: str

    @property
    def text(self) -> str:
        """What the person is shown while the call waits."""
        return f"waiting for the workspace: {self.holder}"


class ModelReplied(BaseModel):
    """The model answered step ``step``: its calls, why it stopped, its tokens when reported."""

    kind: Literal["model_reply"] = "model_reply"
    step: int
    tool_calls: int
    finish_reason: FinishReason
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    """The call's cost when known (reported, or from a price table), in ``currency``."""
    currency: str | None = None
    context_size: int | None = None
    """The model's context window (tokens) the request was made against."""


class ContractRepaired(BaseModel):
    """A contract miss was repaired once, before it reached the history.

    ``reason`` ``cut``: the reply was cut by the token limit; the request was made again.
    ``recovered``: the second reply kept the contract.
    """

    kind: Literal["repair"] = "repair"
    step: int
    reason: Literal["cut"]
    recovered: bool


class CandidatesTried(BaseModel):
    """Several replies were asked for at once and tried against the tests (``engine.candidates``).

    ``tried``: the replies asked for; ``kept``: the 1-based number of the reply kept (the one
    that passed most tests in its scratch copy; ties: the shortest); ``passed``: per reply, the
    tests that passed, or None when it could not be judged (an edit of it failed, it was cut,
    its request failed, no time was left); a reply that changes no file counts the last run's
    passes. ``why``: per reply, why it was not judged, in the person's words ("" when it was;
    empty in transcripts older than it). ``of``: the tests counted in the runs, or None when
    unknown.
    """

    kind: Literal["candidates"] = "candidates"
    step: int
    tried: int
    kept: int
    passed: list[int | None]
    why: list[str] = Field(default_factory=list)
    of: int | None = None


class CheckRan(BaseModel):
    """A done check ran because the model claimed the task done (``engine.checks``).

    ``name``: ``rename`` (no use of a renamed name is left in the workspace), ``changed``
    (something changed in the session), ``diagnostics`` (no error reported by a language
    server after the changes) or ``tests`` (the workspace's tests pass). ``status``:
    ``skipped`` when the check could not be made (the person did not allow the test run, no
    runner installed, no test found). ``detail``: what was found, as the model reads it when
    the check failed. ``refused``: the claim was refused back to the model because of this
    check; False on a pass, and on a failure that ends the session as ``failed``.
    """

    kind: Literal["check"] = "check"
    name: Literal["rename", "changed", "diagnostics", "tests"]
    status: Literal["passed", "failed", "skipped"]
    detail: str
    refused: bool = False


class RulesLoaded(BaseModel):
    """The project's rule files read into the system prompt at the session's start.

    ``files``: workspace-relative paths, in prompt order (empty: none found). ``truncated``:
    those cut to fit the size cap (a share of the model's context).
    """

    kind: Literal["rules"] = "rules"
    files: list[str]
    truncated: list[str] = Field(default_factory=list)


WHOLE_TEXT_CHARS = 65_536
"""Up to this many characters (before and after together) an edit carries both whole texts;
a change of a larger file carries its hunks instead (``file_edited``)."""


class EditHunk(BaseModel):
    """Lines ``old_text`` from line ``old_line`` became ``new_text`` at line ``new_line``.

    Lines are 0-based and LSP's; each hunk holds up to 3 unchanged lines around the change.
    """

    old_line: int
    new_line: int
    old_text: str
    new_text: str


class FileEdited(BaseModel):
    """The editor applied a change (``path`` relative to the workspace root).

    ``hunks`` None: ``old_text`` and ``new_text`` are the whole texts (``old_text`` None for a
    created file). A list: the change of a file larger than ``WHOLE_TEXT_CHARS`` as its hunks
    (``old_text`` and ``new_text`` are then empty), so a one-line change of a 10 MB file is
    published and recorded in a few hundred bytes, not 20 MB.
    """

    kind: Literal["edit"] = "edit"
    tool_call_id: str
    path: str
    old_text: str | None
    new_text: str
    hunks: list[EditHunk] | None = None


def file_edited(tool_call_id: str, path: str, old_text: str | None, new_text: str) -> FileEdited:
    """The event of one applied change: whole texts for a small file, else the hunks.

    A created or deleted file, and a rename (equal texts), keep their whole texts: that text is
    the change. Registered secrets in the texts are redacted (``secrets.redact``): the event
    goes to the editor and the transcript; the file keeps what was written.
    """
    register_known_keys()
    old_text = None if old_text is None else redact(old_text)
    new_text = redact(new_text)
    whole = (
        old_text is None
        or not new_text
        or old_text == new_text
        or len(old_text) + len(new_text) <= WHOLE_TEXT_CHARS
    )
    if whole:
        return FileEdited(
            tool_call_id=tool_call_id, path=path, old_text=old_text, new_text=new_text
        )
    assert old_text is not None  # for the type checker: `whole` covers None
    hunks = [
        EditHunk(old_line=h.old_line, new_line=h.new_line, old_text=h.old_text, new_text=h.new_text)
        for h in text_hunks(old_text, new_text)
    ]
    return FileEdited(tool_call_id=tool_call_id, path=path, old_text="", new_text="", hunks=hunks)


class FilesSeen(BaseModel):
    """The files whose whole text the model knows as a run ends (``Runtime.shown``).

    ``files``: workspace-relative name → SHA-256 of the file's text then (hex). A later turn
    rebuilt from the transcript counts a file as seen only while its text is still that one
    (``Session.restore_seen``): the person may have changed it in between.
    """

    kind: Literal["files_seen"] = "files_seen"
    files: dict[str, str]


class PermissionDecided(BaseModel):
    """A gated tool call was allowed or not.

    ``option``: the option kind the person chose, ``remembered`` for a stored ``*_always``
    rule, None when dismissed or timed out.
    """

    kind: Literal["permission"] = "permission"
    tool_call_id: str
    name: str
    verdict: Literal["allowed", "rejected", "cancelled", "timeout"]
    option: str | None = None


class PlanEntry(BaseModel):
    """One step of the agent's plan (ACP's ``PlanEntry``, without a priority)."""

    content: str
    status: Literal["pending", "in_progress", "completed"]


class PlanUpdated(BaseModel):
    """The agent's to-do list changed (``update_plan``): the whole list, in order."""

    kind: Literal["plan"] = "plan"
    entries: list[PlanEntry]


class SessionResumed(BaseModel):
    """A session that waited (``needs_user_input``, ``waiting_human``) or ended goes on.

    ``reply`` is what the person gave: the answer text, or what they did in the browser.
    """

    kind: Literal["session_resume"] = "session_resume"
    after: StopReason
    reply: str


class SessionFinished(SessionOutcome):
    """The session ended (or waits): the run's ``SessionOutcome``, as an event."""

    kind: Literal["session_end"] = "session_end"


SessionEvent = Annotated[
    StepStarted
    | Activity
    | MovementStarted
    | AgentMessageChunk
    | ToolCallStarted
    | ToolCallFinished
    | WorkspaceWaited
    | ModelReplied
    | ContractRepaired
    | CandidatesTried
    | FileEdited
    | CheckRan
    | RulesLoaded
    | ToolCacheLookup
    | ContextCompacted
    | CheckpointWritten
    | FilesSeen
    | PermissionDecided
    | PlanUpdated
    | SessionResumed
    | SessionFinished,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[SessionEvent] = TypeAdapter(SessionEvent)
