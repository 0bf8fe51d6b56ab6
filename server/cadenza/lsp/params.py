"""Typed shapes of Cadenza's own protocol surface: command arguments and custom messages.

Everything here is a pydantic model with camelCase aliases, so the wire stays camelCase (as LSP
and ACP are) while Python code uses snake_case. Command arguments arrive as raw JSON values
(``workspace/executeCommand`` carries ``arguments: LSPAny[]``) and are validated here; the
server turns ``InvalidArguments`` into a JSON-RPC ``InvalidParams`` error (code -32602).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
)
from pydantic.alias_generators import to_camel

from cadenza.engine.workflows import DEFAULT_WORKFLOW

START_SESSION = "cadenza.startSession"
CANCEL_SESSION = "cadenza.cancelSession"
UNDO_SESSION = "cadenza.undoSession"
REPLY_SESSION = "cadenza.replySession"
LIST_SESSIONS = "cadenza.listSessions"
LOAD_SESSION = "cadenza.loadSession"
SESSION_UPDATE = "cadenza/sessionUpdate"
ASK_USER = "cadenza/askUser"
REQUEST_PERMISSION = "cadenza/requestPermission"
WAITING_HUMAN = "cadenza/waitingHuman"
RAW_RESULT_REQUESTS = frozenset({ASK_USER, REQUEST_PERMISSION, WAITING_HUMAN})
"""Cadenza's own server → client requests: their results are validated here, not by pygls."""


class WireModel(BaseModel):
    """Base of every wire shape: camelCase on the wire, unknown fields rejected."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, frozen=True, alias_generator=to_camel
    )

    def wire(self) -> dict[str, Any]:
        """The JSON object sent to the client (camelCase keys)."""
        return self.model_dump(by_alias=True, mode="json")


MAX_REPLY_CHARS = 20_000
"""Longest reply to a waiting session (characters): more would overflow a small model's context
and end the session instead of resuming it."""


def encodable(value: str) -> str:
    r"""``value`` if it is valid Unicode text (no lone surrogates such as ``\ud800``).

    JSON allows escaped lone surrogates; they cannot be written as UTF-8 (transcripts, model
    requests), so they are refused where text enters.

    Raises:
        ValueError: The text holds a lone surrogate.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text holds a lone surrogate (not valid Unicode)") from None
    return value


class InvalidArguments(ValueError):
    """Command arguments do not match their model; the message names the field and problem."""


class DocumentIdentifier(WireModel):
    """LSP's ``TextDocumentIdentifier``: ``{uri}``."""

    uri: str = Field(min_length=1, max_length=8192)


class StartSessionArgs(WireModel):
    """The one argument of ``cadenza.startSession``.

    Attributes:
        task: What the agent should do (non-blank).
        root_uri: ``file:`` URI of the workspace folder; default: the first workspace folder
            (or ``rootUri``) of ``initialize``.
        model: ``PROVIDER/MODEL`` (e.g. ``openai/gpt-4.1``); default: the configured model.
        workflow: The workflow's name: a built-in (``default``, ``plan-implement-review``),
            or one from ``.cadenza/workflows/*.toml`` of the workspace or the user config dir.
        review: ``auto`` (edits apply at once) or ``confirm`` (the person reviews each change
            first); default: the configured ``review`` (``auto``).
        text_document: The document focused in the editor (``{uri}``, LSP's
            ``TextDocumentIdentifier``): primed into the first message under the loop
            variants that prime (the ``local`` provider's default); ignored when it is not a
            ``file:`` URI inside the workspace.
    """

    task: str = Field(min_length=1)
    root_uri: str | None = None
    model: str | None = Field(default=None, min_length=1)
    workflow: str = Field(default=DEFAULT_WORKFLOW, min_length=1)
    review: Literal["auto", "confirm"] | None = None
    text_document: DocumentIdentifier | None = None

    @field_validator("task")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("task must not be blank")
        return value


class StartSessionResult(WireModel):
    """The result of ``cadenza.startSession``: ``{sessionId}``."""

    session_id: str


class CancelSessionArgs(WireModel):
    """The one argument of ``cadenza.cancelSession``: ``{sessionId}``."""

    session_id: str = Field(min_length=1)


class CancelSessionResult(WireModel):
    """``{cancelled}``: True when a running session was asked to stop."""

    cancelled: bool


class UndoSessionArgs(WireModel):
    """The one argument of ``cadenza.undoSession``: ``{sessionId}``."""

    session_id: str = Field(min_length=1)


class UndoneFile(WireModel):
    """A file that ``cadenza.undoSession`` put back.

    Attributes:
        path: Workspace-relative path, ``/``-separated (where the file is after undo).
        action: ``restored`` (its text), ``removed`` (the session created it), ``recreated``
            (the session deleted it), ``moved_back`` (the session renamed it).
        old_path: For ``moved_back``: the name the session had given it (omitted otherwise).
    """

    path: str
    action: Literal["restored", "removed", "recreated", "moved_back"]
    old_path: str | None = None

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("oldPath", "old_path"):
            if key in data and data[key] is None:
                del data[key]
        return data


class UndoSessionResult(WireModel):
    """The result of ``cadenza.undoSession``.

    Attributes:
        session_id: The session undone.
        files: The files changed back, in the order the edit applied them.
        unchanged: Files the session changed that were already as before (e.g. the person
            undid the change in the editor), left alone.
    """

    session_id: str
    files: list[UndoneFile]
    unchanged: list[str]


class _OmitNone(WireModel):
    """A wire shape whose None fields are left out (optional fields absent, not null)."""

    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None}


class AskUserParams(_OmitNone):
    """Params of the server → client request ``cadenza/askUser``.

    Attributes:
        session_id: The session asking.
        question: The question (for ``needs_user_input``: the missing information).
        why_no_default: Why the agent could not pick a reasonable default itself.
        options: Suggested answers, when the agent offered some; free text is always allowed.
    """

    session_id: str
    question: str
    why_no_default: str | None = None
    options: list[str] | None = None


class AskUserResult(BaseModel):
    """Result of ``cadenza/askUser``: ``{answer}``, null when the person declined.

    Extra fields are ignored: a client may add its own.
    """

    answer: str | None = Field(default=None, max_length=MAX_REPLY_CHARS)

    @field_validator("answer")
    @classmethod
    def _valid_text(cls, value: str | None) -> str | None:
        return None if value is None else encodable(value)


M = TypeVar("M", bound=BaseModel)

_JSON_TYPES: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "argument"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_command_args(model: type[M], args: Sequence[Any]) -> M:
    """Validate the positional arguments of a command that takes exactly one object.

    Args:
        model: The pydantic model of that object.
        args: ``ExecuteCommandParams.arguments`` as received (raw JSON values).

    Returns:
        The validated model.

    Raises:
        InvalidArguments: Not exactly one argument, the argument is not a JSON object, or a
            field is missing, of the wrong type or unknown.
    """
    if len(args) != 1:
        raise InvalidArguments(f"expected exactly one argument (an object), got {len(args)}")
    (arg,) = args
    if not isinstance(arg, dict):
        kind = _JSON_TYPES.get(type(arg), "that")
        raise InvalidArguments(f"the argument must be a JSON object, not {kind}")
    try:
        return model.model_validate(arg)
    except ValidationError as exc:
        raise InvalidArguments(_describe(exc)) from None


class ReplySessionArgs(WireModel):
    """The one argument of ``cadenza.replySession``: ``{sessionId, text}``.

    ``text`` is the answer to a ``needs_user_input`` question, or (after ``waiting_human``)
    what the person did in the browser (may be empty: "done").
    """

    session_id: str = Field(min_length=1)
    text: str = Field(max_length=MAX_REPLY_CHARS)

    @field_validator("text")
    @classmethod
    def _valid_text(cls, value: str) -> str:
        return encodable(value)


class ReplySessionResult(WireModel):
    """``{resumed, state}``: ``resumed`` is True when the reply resumed the session."""

    resumed: bool
    state: str


class ListSessionsArgs(WireModel):
    """The optional argument of ``cadenza.listSessions``: ``{limit?}`` (newest first)."""

    limit: int | None = Field(default=None, ge=1)


class SessionInfo(_OmitNone):
    """One session in ``cadenza.listSessions``.

    Attributes:
        session_id: The id.
        task: The task it started with.
        state: ``running``, ``interrupted`` (the server stopped while it ran), or its last
            stop reason (``needs_user_input`` and ``waiting_human``: it waits for a reply).
        started: When it started (ISO 8601, UTC).
        workflow: The workflow it runs.
        model: ``PROVIDER/MODEL``.
        root: The workspace folder.
        question: For a session waiting for the person: what it asks.
    """

    session_id: str
    task: str
    state: str
    started: str
    workflow: str
    model: str
    root: str
    question: str | None = None


class ListSessionsResult(WireModel):
    """``{sessions: SessionInfo[]}``, newest first."""

    sessions: list[SessionInfo]


class LoadSessionArgs(WireModel):
    """The one argument of ``cadenza.loadSession``: ``{sessionId}``."""

    session_id: str = Field(min_length=1)


class LoadSessionResult(WireModel):
    """``cadenza.loadSession``'s result, sent after the replayed updates.

    Attributes:
        session: The session as ``cadenza.listSessions`` lists it.
        updates: How many ``cadenza/sessionUpdate`` notifications were replayed.
    """

    session: SessionInfo
    updates: int


class PermissionToolCall(_OmitNone):
    """ACP ``ToolCallUpdate`` as sent in a permission request (``raw_input``: parsed JSON)."""

    tool_call_id: str
    title: str
    kind: str
    raw_input: Any = None


class PermissionOption(WireModel):
    """ACP ``PermissionOption``: ``{optionId, name, kind}``."""

    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class RequestPermissionParams(WireModel):
    """Params of the server → client request ``cadenza/requestPermission`` (ACP's shape)."""

    session_id: str
    tool_call: PermissionToolCall
    options: list[PermissionOption]


class SelectedOutcome(BaseModel):
    """``{outcome: "selected", optionId}``."""

    model_config = ConfigDict(populate_by_name=True, alias_generator=to_camel)

    outcome: Literal["selected"]
    option_id: str


class CancelledOutcome(BaseModel):
    """``{outcome: "cancelled"}``: the prompt was dismissed."""

    outcome: Literal["cancelled"]


class RequestPermissionResult(BaseModel):
    """Result of ``cadenza/requestPermission``: ``{outcome: Selected | Cancelled}``."""

    outcome: SelectedOutcome | CancelledOutcome = Field(discriminator="outcome")


class WaitingHumanParams(_OmitNone):
    """Params of the server → client request ``cadenza/waitingHuman``.

    Attributes:
        session_id: The session that waits.
        wait_reason: What the person must do in the browser.
        uri: The page, when known.
        opened: True when the server already asked the editor to open ``uri``
            (``window/showDocument``); the client then does not open it again.
    """

    session_id: str
    wait_reason: str
    uri: str | None = None
    opened: bool = False


class WaitingHumanResult(BaseModel):
    """Result of ``cadenza/waitingHuman``: ``{action: "continue" | "cancel"}``."""

    action: Literal["continue", "cancel"]
