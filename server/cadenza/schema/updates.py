"""``cadenza/sessionUpdate``: the notification that tells the client what a session does.

The update kinds and field names follow the Agent Client Protocol's ``session/update``
(``user_message_chunk``, ``agent_message_chunk``, ``tool_call``, ``tool_call_update``,
``plan``), plus Cadenza's ``model_reply``, ``repair``, ``candidates``, ``movement``,
``compaction``, ``session_resume`` and ``session_end``. A kind this protocol version does not
know (a newer server's, or ACP's ``usage_update``) parses leniently as :class:`OtherUpdate`,
which a client ignores; a tool-call content block of an unknown type as :class:`OtherContent`.

Fields an older server may leave out have defaults; the server always sends them.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
)

from cadenza.schema.base import OPEN, SparseWireModel, UnknownKind, WireModel
from cadenza.schema.outcome import SessionOutcome
from cadenza.schema.pickers import SessionFix
from cadenza.types import StopReason, ToolStatus


def raw_input(arguments: str) -> Any:
    """A call's ``rawInput``: its arguments as JSON when they parse, else the text as written."""
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments


class TextBlock(WireModel):
    """ACP ``ContentBlock`` of type text."""

    type: Annotated[Literal["text"], OPEN] = "text"
    text: str = ""


class ToolOutput(WireModel):
    """ACP ``ToolCallContent`` of type ``content``: what the tool returned."""

    type: Literal["content"] = "content"
    content: TextBlock = TextBlock()


class ToolDiff(WireModel):
    """ACP ``ToolCallContent`` of type ``diff``; ``old_text`` is null for a new file.

    Without ``old_line``/``new_line`` the texts are the whole file before and after. With them
    (a change of a large file), one hunk: ``old_text`` is the file's lines from line
    ``old_line`` (0-based) before the change, ``new_text`` its lines from ``new_line`` after,
    with up to 3 unchanged lines around the change; the call has one diff per hunk. Absent, not
    null, when unset (``old_text`` stays null for a new file).
    """

    type: Literal["diff"] = "diff"
    path: str = Field(description="Absolute file path.")
    old_text: str | None = None
    new_text: str = ""
    old_line: int | None = None
    new_line: int | None = None

    @model_serializer(mode="wrap")
    def _omit_lines(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("oldLine", "newLine", "old_line", "new_line"):
            if key in data and data[key] is None:
                del data[key]
        return data


class OtherContent(UnknownKind):
    """A tool-call content block of a type this protocol version does not know."""

    type: str = ""


def _content_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("content", "diff") else "other"


ToolCallContent = Annotated[
    Annotated[ToolOutput, Tag("content")]
    | Annotated[ToolDiff, Tag("diff")]
    | Annotated[OtherContent, Tag("other")],
    Discriminator(_content_tag),
]


class UserMessageChunk(WireModel):
    """``user_message_chunk``: the person's text (the task, an answer).

    Sent when ``cadenza.loadSession`` replays a history (as ACP's ``session/load`` does).
    """

    session_update: Literal["user_message_chunk"] = "user_message_chunk"
    content: TextBlock = TextBlock()


class AgentMessageChunk(WireModel):
    """``agent_message_chunk``: assistant text, streamed."""

    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    content: TextBlock = TextBlock()


class ToolCall(WireModel):
    """``tool_call``: the model called a tool (``raw_input``: its arguments as parsed JSON).

    ``name`` is the tool's name as the model called it (ACP has ``title`` and ``kind`` only);
    ``kind`` is ACP's ``ToolKind`` (``read``, ``edit``, ``execute``...: an editor's icon).
    """

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str = ""
    title: str = ""
    kind: str = "other"
    status: Annotated[ToolStatus, OPEN] | None = None
    raw_input: Any = None


class ToolCallUpdate(SparseWireModel):
    """``tool_call_update``: a result or a diff for an earlier ``tool_call``.

    ``status`` is omitted on the wire when None (a diff published while the call still runs).
    ``observation`` is set when the engine answered the call itself instead of running it
    (``repeat``, ``cut``, ``invalid``, ``not_allowed``), omitted otherwise. ``summary``: the
    result in a few plain words for the person, when ``content`` is written for the model
    (what it should do next) or the call changed nothing; omitted otherwise.
    """

    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: Annotated[ToolStatus, OPEN] | None = None
    content: list[ToolCallContent] = Field(default_factory=list)
    observation: str | None = None
    summary: str | None = None

    def text(self) -> str:
        """The text of the ``content`` blocks, joined by newlines."""
        return "\n".join(b.content.text for b in self.content if isinstance(b, ToolOutput))


class Cost(WireModel):
    """``{amount, currency}``: what a model call cost (ISO 4217 currency, e.g. ``USD``)."""

    amount: float
    currency: str


class ModelReply(SparseWireModel):
    """``model_reply``: the model answered step ``step``.

    ``tool_calls``: how many calls the reply held (0: the turn ends); ``finish_reason`` as the
    provider said it (``length``: cut by the token limit; ``repetition``: stopped by Cadenza
    while it streamed, because it kept repeating itself); tokens as the provider reported
    them (omitted when it did not); ``cost`` of this call when the provider reported it or a
    price table is configured (omitted otherwise: never guessed); ``context_size`` the model's
    context window the request was made against, so a client can show the share in use.
    """

    session_update: Literal["model_reply"] = "model_reply"
    step: int = 0
    tool_calls: int = 0
    finish_reason: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: Cost | None = None
    context_size: int | None = None


class Repair(WireModel):
    """``repair``: a contract miss (``reason`` ``cut``) was repaired once.

    ``recovered``: the second reply kept the contract.
    """

    session_update: Literal["repair"] = "repair"
    step: int = 0
    reason: str = ""
    recovered: bool = False


class Candidates(WireModel):
    """``candidates``: several replies were asked for at once and tried against the tests.

    ``tried``: how many; ``kept``: the 1-based number of the one kept (it passed most tests
    in its copy of the workspace; ties: the shortest); ``passed``: each one's passing tests,
    null when it could not be judged (its edit failed, it was cut); ``why``: each one's reason
    it was not judged, in the person's words ("" when it was; absent from older servers);
    ``of``: the tests counted, null when unknown.
    """

    session_update: Literal["candidates"] = "candidates"
    step: int = 0
    tried: int = 0
    kept: int = 0
    passed: list[int | None] = Field(default_factory=list)
    why: list[str] = Field(default_factory=list)
    of: int | None = None

    def line(self) -> str:
        """What the person reads: how many were tried, which was kept, and why."""
        kept = self.passed[self.kept - 1] if 0 < self.kept <= len(self.passed) else None
        if kept is None:
            reasons = list(dict.fromkeys(w for w in self.why if w))
            why = f" ({'; '.join(reasons)})" if reasons else ""
            return (
                f"Tried {self.tried} replies against the tests; none could be judged{why}, "
                f"kept reply {self.kept}."
            )
        of = f" of {self.of}" if self.of is not None else ""
        each = [str(n) if n is not None else self._not_judged(i) for i, n in enumerate(self.passed)]
        # A reason holds commas of its own: then the replies are parted by semicolons.
        sep = "; " if any(":" in e for e in each) else ", "
        return (
            f"Tried {self.tried} replies against the tests on copies of the workspace; kept "
            f"reply {self.kept}: {kept}{of} tests pass with it (each reply: {sep.join(each)})."
        )

    def _not_judged(self, index: int) -> str:
        """Reply ``index`` (0-based) was not judged: so, and why when the server said."""
        why = self.why[index] if index < len(self.why) else ""
        return f"not judged: {why}" if why else "not judged"


class Check(WireModel):
    """``check``: a done check ran because the model claimed the task done.

    ``name``: ``rename`` (no use of a renamed name is left in the workspace), ``changed``
    (something changed in the session) or ``tests`` (the workspace's tests pass); ``status``:
    ``passed``, ``failed`` or ``skipped`` (the check could not be made, e.g. the person did not
    allow the test run); ``detail``: what was found; ``refused``: the claim went back to the
    model because of this check.
    """

    session_update: Literal["check"] = "check"
    name: str = ""
    status: str = ""
    detail: str = ""
    refused: bool = False


class Rules(WireModel):
    """``rules``: the project rule files read into the prompt (workspace-relative paths).

    ``truncated``: those cut to fit the model's context. Sent first, also when none is found.
    """

    session_update: Literal["rules"] = "rules"
    files: list[str] = Field(default_factory=list)
    truncated: list[str] = Field(default_factory=list)


class Movement(WireModel):
    """``movement``: a movement of the workflow starts.

    ``index`` counts the movements run so far, from 1 (a movement run twice, e.g. ``implement``
    again after ``review``, gets a new index); ``reason`` is why the previous movement handed
    over (empty for the first movement).
    """

    session_update: Literal["movement"] = "movement"
    workflow: str = ""
    movement: str
    index: int = 0
    reason: str = ""


class Compaction(WireModel):
    """``compaction``: older turns were summarized to relieve context pressure (tokens)."""

    session_update: Literal["compaction"] = "compaction"
    tokens_before: int = 0
    tokens_after: int = 0
    messages_summarized: int = 0


ResumeKind = Literal["answer", "browser", "prompt"]


def resume_kind(after: str) -> ResumeKind:
    """What resumes a session that stopped with ``after``: an answer, the browser, a prompt."""
    if after == "needs_user_input":
        return "answer"
    return "browser" if after == "waiting_human" else "prompt"


class SessionResume(WireModel):
    """``session_resume``: a session that waited (or ended) runs again.

    ``after`` is the stop reason it resumes from; ``reply`` what the person gave (the answer,
    or what they did in the browser; may be empty); ``kind`` what that is: ``answer`` (to a
    question), ``browser`` (done acting in the browser) or ``prompt`` (a follow-up prompt
    after a turn that ended), so a client words it right.
    """

    session_update: Literal["session_resume"] = "session_resume"
    after: Annotated[StopReason, OPEN]
    reply: str = ""
    kind: Annotated[ResumeKind, OPEN] = "prompt"


class _SessionEndHead(SparseWireModel):
    """The kind tag of ``session_end``, first on the wire (before the outcome's fields)."""

    session_update: Literal["session_end"] = "session_end"


class SessionEnd(SessionOutcome, _SessionEndHead):
    """``session_end``: the session stopped; its fields are the run's ``SessionOutcome``.

    After ``needs_user_input`` and ``waiting_human`` the session waits (the outcome's waiting
    fields say for what): ``cadenza.replySession`` (or the answered prompt) resumes it.
    ``fix``: a command that fixes the error (e.g. ``cadenza.pullModel`` for a local model not
    pulled).
    """

    fix: SessionFix | None = None


class PlanEntry(WireModel):
    """ACP's ``PlanEntry``: one step of the agent's to-do list.

    ``status``: ``pending``, ``in_progress`` or ``completed``; ``priority`` is always
    ``medium`` (ACP requires it; the agent does not rank its steps).
    """

    content: str = ""
    priority: str = "medium"
    status: Annotated[Literal["pending", "in_progress", "completed"], OPEN] = "pending"


class Plan(WireModel):
    """``plan``: the agent's to-do list, whole; each one replaces the one before (as ACP's)."""

    session_update: Literal["plan"] = "plan"
    entries: list[PlanEntry] = Field(default_factory=list)


class OtherUpdate(UnknownKind):
    """An update kind this protocol version does not know (``usage_update``, ...)."""

    session_update: str


_UPDATE_KINDS = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "model_reply",
        "repair",
        "candidates",
        "check",
        "rules",
        "movement",
        "compaction",
        "session_resume",
        "session_end",
        "plan",
    }
)


def _update_tag(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("sessionUpdate", value.get("session_update"))
    else:
        kind = getattr(value, "session_update", None)
    return kind if kind in _UPDATE_KINDS else "other"


SessionUpdate = Annotated[
    Annotated[UserMessageChunk, Tag("user_message_chunk")]
    | Annotated[AgentMessageChunk, Tag("agent_message_chunk")]
    | Annotated[ToolCall, Tag("tool_call")]
    | Annotated[ToolCallUpdate, Tag("tool_call_update")]
    | Annotated[ModelReply, Tag("model_reply")]
    | Annotated[Repair, Tag("repair")]
    | Annotated[Candidates, Tag("candidates")]
    | Annotated[Check, Tag("check")]
    | Annotated[Rules, Tag("rules")]
    | Annotated[Movement, Tag("movement")]
    | Annotated[Compaction, Tag("compaction")]
    | Annotated[SessionResume, Tag("session_resume")]
    | Annotated[SessionEnd, Tag("session_end")]
    | Annotated[Plan, Tag("plan")]
    | Annotated[OtherUpdate, Tag("other")],
    Discriminator(_update_tag),
]


class SessionUpdateParams(WireModel):
    """Params of the notification ``cadenza/sessionUpdate``."""

    session_id: str
    update: SessionUpdate
