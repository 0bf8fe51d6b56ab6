"""Typed shapes of Cadenza's custom messages, as the client reads and answers them.

The server's side of the contract is in ``docs/protocol.md``. These models are deliberately
lenient (unknown fields ignored, unknown update kinds kept as :class:`OtherUpdate`): a client
must keep working when a newer server sends more than it knows. They are registered with pygls
the way esbonio registers its own methods (a method → message-type map on the protocol plus a
cattrs hook for pydantic models), so handlers receive typed objects, not namedtuples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import attrs
import cattrs
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag
from pydantic.alias_generators import to_camel
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.json_rpc import MsgId

START_SESSION = "cadenza.startSession"
REPLY_SESSION = "cadenza.replySession"
CANCEL_SESSION = "cadenza.cancelSession"
UNDO_SESSION = "cadenza.undoSession"
SESSION_UPDATE = "cadenza/sessionUpdate"
ASK_USER = "cadenza/askUser"

KNOWN_STOP_REASONS = (
    "end_turn",
    "needs_user_input",
    "waiting_human",
    "failed",
    "aborted",
    "cancelled",
    "max_steps",
    "error",
)
"""Stop reasons of this protocol version; a newer server may send others (kept as strings)."""


class Wire(BaseModel):
    """Base of the client's wire models: camelCase aliases, unknown fields ignored, frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )

    def wire(self) -> dict[str, Any]:
        """The JSON object to send (camelCase keys)."""
        return self.model_dump(by_alias=True, mode="json")


class TextBlock(Wire):
    """ACP ``ContentBlock`` of type text."""

    type: str = "text"
    text: str = ""


class ToolOutput(Wire):
    """ACP ``ToolCallContent`` of type ``content``: what the tool returned."""

    type: Literal["content"] = "content"
    content: TextBlock = TextBlock()


class ToolDiff(Wire):
    """ACP ``ToolCallContent`` of type ``diff``; ``old_text`` is None for a new file."""

    type: Literal["diff"] = "diff"
    path: str
    old_text: str | None = None
    new_text: str = ""


class OtherContent(Wire):
    """A tool-call content block of a kind this client does not know."""

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


class AgentMessageChunk(Wire):
    """``agent_message_chunk``: assistant text, streamed."""

    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    content: TextBlock = TextBlock()


class ToolCall(Wire):
    """``tool_call``: the model called a tool; ``raw_input`` is its arguments as JSON."""

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str = ""
    title: str = ""
    kind: str = "other"
    status: str | None = None
    raw_input: Any = None


class ToolCallUpdate(Wire):
    """``tool_call_update``: a result (``status`` completed/failed) or a diff of a running call."""

    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: str | None = None
    title: str | None = None
    content: list[ToolCallContent] = Field(default_factory=list)
    observation: str | None = None
    """Set when the engine answered the call itself: ``repeat``, ``cut``, ``invalid``,
    ``not_allowed``."""

    def text(self) -> str:
        """The text of the ``content`` blocks, joined by newlines."""
        return "\n".join(b.content.text for b in self.content if isinstance(b, ToolOutput))


class Movement(Wire):
    """``movement``: a movement of the workflow starts (``index`` counts from 1).

    ``reason`` is why the previous movement handed over; empty for the first one.
    """

    session_update: Literal["movement"] = "movement"
    workflow: str = ""
    movement: str
    index: int = 0
    reason: str = ""


class Compaction(Wire):
    """``compaction``: the server summarized older turns to free context (token counts)."""

    session_update: Literal["compaction"] = "compaction"
    tokens_before: int = 0
    tokens_after: int = 0
    messages_summarized: int = 0


class SessionEnd(Wire):
    """``session_end``: the session is over; ``message`` is the final answer or the error.

    ``missing_info`` and ``why_no_default`` come with ``needs_user_input``: what the agent needs
    from the person, and why it could not pick a reasonable default.
    """

    session_update: Literal["session_end"] = "session_end"
    stop_reason: str
    message: str = ""
    steps: int = 0
    missing_info: str | None = None
    why_no_default: str | None = None


class ModelReply(Wire):
    """``model_reply``: the model answered step ``step`` (calls, finish_reason, tokens)."""

    session_update: Literal["model_reply"] = "model_reply"
    step: int = 0
    tool_calls: int = 0
    finish_reason: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Repair(Wire):
    """``repair``: a contract miss was repaired once; ``recovered`` when that worked."""

    session_update: Literal["repair"] = "repair"
    step: int = 0
    reason: str = ""
    recovered: bool = False


class OtherUpdate(Wire):
    """An update kind this client does not know (``plan``, ``usage_update``, ...): ignored."""

    model_config = ConfigDict(extra="allow")

    session_update: str


_UPDATE_KINDS = (
    "agent_message_chunk",
    "tool_call",
    "tool_call_update",
    "movement",
    "compaction",
    "session_end",
    "model_reply",
    "repair",
)


def _update_tag(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("sessionUpdate", value.get("session_update"))
    else:
        kind = getattr(value, "session_update", None)
    return kind if kind in _UPDATE_KINDS else "other"


SessionUpdate = Annotated[
    Annotated[AgentMessageChunk, Tag("agent_message_chunk")]
    | Annotated[ToolCall, Tag("tool_call")]
    | Annotated[ToolCallUpdate, Tag("tool_call_update")]
    | Annotated[Movement, Tag("movement")]
    | Annotated[Compaction, Tag("compaction")]
    | Annotated[SessionEnd, Tag("session_end")]
    | Annotated[ModelReply, Tag("model_reply")]
    | Annotated[Repair, Tag("repair")]
    | Annotated[OtherUpdate, Tag("other")],
    Discriminator(_update_tag),
]


class SessionUpdateParams(Wire):
    """Params of the notification ``cadenza/sessionUpdate``."""

    session_id: str
    update: SessionUpdate


class AskUserParams(Wire):
    """Params of the server → client request ``cadenza/askUser``."""

    session_id: str = ""
    question: str = ""
    why_no_default: str | None = None
    options: list[str] | None = None


class AskUserResult(Wire):
    """The answer to ``cadenza/askUser``; None means the person declined."""

    answer: str | None


class StartSessionArgs(Wire):
    """The one argument of ``cadenza.startSession``."""

    task: str
    root_uri: str
    model: str | None = None
    workflow: str | None = None
    review: Literal["auto", "confirm"] | None = None
    text_document: dict[str, str] | None = None
    """``{uri}`` of the file the person has open (primed under the local loop variant)."""

    def wire(self) -> dict[str, Any]:
        """The argument object, without the optional fields that are not given."""
        return self.model_dump(by_alias=True, mode="json", exclude_none=True)


class StartSessionResult(Wire):
    """The result of ``cadenza.startSession``."""

    session_id: str


class UndoneFile(Wire):
    """A file ``cadenza.undoSession`` put back.

    ``action`` is ``restored``, ``removed``, ``recreated`` or ``moved_back`` (newer servers may
    send others); ``old_path`` is where a moved-back file was.
    """

    path: str
    action: str
    old_path: str | None = None


class UndoSessionResult(Wire):
    """The result of ``cadenza.undoSession``."""

    session_id: str
    files: list[UndoneFile] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)


class CancelSessionResult(Wire):
    """The result of ``cadenza.cancelSession``."""

    cancelled: bool = False


@attrs.define
class SessionUpdateNotification:
    """JSON-RPC envelope of ``cadenza/sessionUpdate`` (for pygls's method → type map)."""

    method: str
    jsonrpc: str
    params: SessionUpdateParams


@attrs.define
class AskUserRequest:
    """JSON-RPC envelope of ``cadenza/askUser`` (for pygls's method → type map)."""

    id: MsgId
    method: str
    jsonrpc: str
    params: AskUserParams


CUSTOM_MESSAGE_TYPES: dict[str, type[Any]] = {
    SESSION_UPDATE: SessionUpdateNotification,
    ASK_USER: AskUserRequest,
}


def _is_wire_model(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, BaseModel)


def client_converter() -> cattrs.Converter:
    """The pygls converter plus pydantic models: validated in, dumped by alias out."""
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook_func(
        _is_wire_model, lambda data, cls: cls.model_validate(data)
    )
    converter.register_unstructure_hook_func(
        _is_wire_model, lambda model: model.model_dump(by_alias=True, mode="json")
    )
    return converter


MessageSink = Callable[[dict[str, Any]], None]
"""Receives each request and notification from the server as raw JSON, before it is handled."""


class CadenzaClientProtocol(LanguageServerProtocol):
    """pygls's LSP protocol that also knows Cadenza's custom message types.

    Attributes:
        message_sink: When set, called with every request and notification the server sends
            (the whole JSON-RPC message as parsed JSON), in arrival order: ``cadenza run
            --events``.
    """

    message_sink: MessageSink | None = None

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Show server requests and notifications to ``message_sink``; then parse as pygls does.

        pygls calls this as the JSON decoder's ``object_hook``, innermost objects first, so the
        message's ``params`` are still plain JSON here. Only the message itself carries both
        ``jsonrpc`` and ``method``.
        """
        if self.message_sink is not None and "jsonrpc" in data and "method" in data:
            self.message_sink(data)
        return super().structure_message(data)

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """The message class of ``method``: Cadenza's own, else lsprotocol's."""
        # The base method is wrapped in functools.lru_cache; a plain override is called alike.
        return CUSTOM_MESSAGE_TYPES.get(method) or super().get_message_type(method)

    def _handle_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        """Drop a response to a request that was given up (Ctrl-C); else as pygls does.

        pygls would set the result of the cancelled future, raising ``InvalidStateError``
        and printing a traceback on the terminal.
        """
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)
