"""The ``cadenza.*`` commands' arguments and results (``workspace/executeCommand``).

Each command takes one JSON object (``ExecuteCommandParams.arguments: [object]``; ``cadenza.
listSessions`` also none) and answers one. The server parses arguments strictly
(``base.strict_validate``); the client reads results leniently (``base``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from cadenza.schema.base import (
    MAX_REPLY_CHARS,
    OPEN,
    SparseWireModel,
    WireModel,
    encodable,
)

DEFAULT_WORKFLOW = "default"
"""The workflow a session runs when ``cadenza.startSession`` names none."""


class DocumentIdentifier(WireModel):
    """LSP's ``TextDocumentIdentifier``: ``{uri}``."""

    uri: str = Field(min_length=1, max_length=8192)


class StartSessionArgs(SparseWireModel):
    """The one argument of ``cadenza.startSession`` (optional fields left out when None).

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
        context: What the editor adds to the task (``PromptContext``: selection, files,
            symbols, problems), as ``cadenza.promptSession``'s: blocks after the task's text.
    """

    task: str = Field(min_length=1)
    root_uri: str | None = None
    model: str | None = Field(default=None, min_length=1)
    workflow: str = Field(default=DEFAULT_WORKFLOW, min_length=1)
    review: Literal["auto", "confirm"] | None = None
    text_document: DocumentIdentifier | None = None
    context: PromptContext | None = None

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

    cancelled: bool = False


class UndoSessionArgs(WireModel):
    """The one argument of ``cadenza.undoSession``: ``{sessionId}``."""

    session_id: str = Field(min_length=1)


UndoAction = Literal["restored", "removed", "recreated", "moved_back"]
"""What undo did to a file (a newer server may send others: kept as strings)."""


class UndoneFile(SparseWireModel):
    """A file that ``cadenza.undoSession`` put back.

    Attributes:
        path: Workspace-relative path, ``/``-separated (where the file is after undo).
        action: ``restored`` (its text), ``removed`` (the session created it), ``recreated``
            (the session deleted it), ``moved_back`` (the session renamed it).
        old_path: For ``moved_back``: the name the session had given it (omitted otherwise).
    """

    path: str
    action: Annotated[UndoAction, OPEN]
    old_path: str | None = None


class UndoSessionResult(WireModel):
    """The result of ``cadenza.undoSession``.

    Attributes:
        session_id: The session undone.
        files: The files changed back, in the order the edit applied them.
        unchanged: Files the session changed that were already as before (e.g. the person
            undid the change in the editor), left alone.
    """

    session_id: str
    files: list[UndoneFile] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)


class RestoreTurnArgs(WireModel):
    """The arguments of ``cadenza.restoreTurn``: ``{sessionId, turn}`` (1-based)."""

    session_id: str = Field(min_length=1)
    turn: int = Field(ge=1)


class SkippedFile(WireModel):
    """A file a restore left alone: the person changed it since; ``reason`` says how."""

    path: str
    reason: str


class RestoreTurnResult(WireModel):
    """The result of ``cadenza.restoreTurn``: the session as it was before the turn.

    Attributes:
        session_id: The session.
        turn: The turn restored (1-based): the session now has ``turn - 1`` turns.
        text: The person's own words that started it (for the editor's input).
        files: The files put back, in the order the edit applied them.
        unchanged: Files those turns changed that were already as before, left alone.
        skipped: Files the person changed since, left alone (each with why).
    """

    session_id: str
    turn: int
    text: str
    files: list[UndoneFile] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    skipped: list[SkippedFile] = Field(default_factory=list)


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


class SteerSessionArgs(WireModel):
    """The one argument of ``cadenza.steerSession``: ``{sessionId, text}``.

    ``text`` goes into the session's running turn as the person's message, at the next step
    boundary (non-blank).
    """

    session_id: str = Field(min_length=1)
    text: str = Field(min_length=1, max_length=MAX_REPLY_CHARS)

    @field_validator("text")
    @classmethod
    def _valid_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the message is blank")
        return encodable(value)


class SteerSessionResult(WireModel):
    """``{steered}``: True, the running turn takes the message (a refusal is an error)."""

    steered: bool = True


class ListSessionsArgs(WireModel):
    """The optional argument of ``cadenza.listSessions``: ``{limit?}`` (newest first)."""

    limit: int | None = Field(default=None, ge=1)


class SessionInfo(SparseWireModel):
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


MAX_CONTEXT_FILES = 20
"""At most this many files in ``cadenza.promptSession``'s ``context.files``."""


class LspPosition(WireModel):
    """LSP's ``Position``: ``{line, character}`` (zero-based)."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class LspRange(WireModel):
    """LSP's ``Range``: ``{start, end}``."""

    start: LspPosition
    end: LspPosition


class PromptSelection(SparseWireModel):
    """The editor's selection given with a prompt: ``{uri, range?, text}``."""

    uri: str = Field(min_length=1, max_length=8192)
    range: LspRange | None = None
    text: str = Field(max_length=MAX_REPLY_CHARS)


class PromptProblem(SparseWireModel):
    """One diagnostic given with a prompt: ``{uri, message, range?, severity?}`` (LSP's 1-4)."""

    uri: str = Field(min_length=1, max_length=8192)
    message: str = Field(max_length=4000)
    range: LspRange | None = None
    severity: int | None = Field(default=None, ge=1, le=4)


class PromptSymbol(WireModel):
    """A symbol mentioned in a prompt (``@name``): ``{name, uri, range}``."""

    name: str = Field(min_length=1, max_length=500)
    uri: str = Field(min_length=1, max_length=8192)
    range: LspRange


class PromptContext(SparseWireModel):
    """What the editor adds to a prompt: ``{selection?, files?, symbols?, problems?}``.

    Each becomes a text block after the prompt's text (files read from the editor's buffers
    when open, so unsaved changes count; each file and the whole context bounded in size).
    """

    selection: PromptSelection | None = None
    files: list[str] = Field(default_factory=list, max_length=MAX_CONTEXT_FILES)
    symbols: list[PromptSymbol] = Field(default_factory=list, max_length=MAX_CONTEXT_FILES)
    problems: list[PromptProblem] = Field(default_factory=list, max_length=200)


class PromptSessionArgs(SparseWireModel):
    """The one argument of ``cadenza.promptSession``: ``{sessionId, text, context?}``.

    ``text`` is the next prompt of a session whose turn ended (it goes on in the same
    conversation); for a session that waits for the person it is the answer.
    """

    session_id: str = Field(min_length=1)
    text: str = Field(min_length=1, max_length=MAX_REPLY_CHARS)
    context: PromptContext | None = None

    @field_validator("text")
    @classmethod
    def _valid_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text must not be blank")
        return encodable(value)


class PromptSessionResult(WireModel):
    """The result of ``cadenza.promptSession``: ``{sessionId}`` (the turn runs on)."""

    session_id: str


class ConfigureSessionArgs(SparseWireModel):
    """The one argument of ``cadenza.configureSession``: ``{sessionId, model?, workflow?}``."""

    session_id: str = Field(min_length=1)
    model: str | None = Field(default=None, min_length=1)
    workflow: str | None = Field(default=None, min_length=1)


class ConfigureSessionResult(WireModel):
    """``{sessionId, model, workflow}``: what the session's next turn uses."""

    session_id: str
    model: str
    workflow: str
