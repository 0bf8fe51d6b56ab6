"""The replay sanitizer: a request history strict OpenAI-compatible servers accept.

Strict servers (OpenAI, DeepSeek, vLLM and others behind LiteLLM) answer HTTP 400 when an
assistant message's ``tool_calls`` are not each answered by a ``tool`` message right after it, or
when a ``tool`` message answers no call right before it. A transcript cut by a crash, a cancelled
batch, or a conversation carried across movements can hold such histories; ``sanitize_history``
repairs any of them, and is the same function for the live path between movements and for a
replayed transcript. ``check_strict`` is the server's rule, for tests and fake servers.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cadenza.messages import AssistantMessage, Message, ToolCall, ToolMessage

INTERRUPTED_RESULT = "no result was recorded for this call (the session was interrupted)"

MISSING_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
"""OpenAI Chat Completions' HTTP 400 text for unanswered calls (``invalid_request_error``)."""

ORPHAN_RESULT = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceding message "
    "with 'tool_calls'."
)
"""OpenAI's (and DeepSeek's) HTTP 400 text for a ``tool`` message that answers no call."""


def interrupted_result(call: ToolCall) -> ToolMessage:
    """The synthetic error result of a call whose result was never recorded."""
    return ToolMessage(
        tool_call_id=call.id, name=call.name, content=INTERRUPTED_RESULT, is_error=True
    )


def _match_results(messages: Sequence[Message]) -> dict[tuple[int, int], ToolMessage]:
    """Pair tool messages with calls: ``{(message index, call index): tool message}``.

    A tool message answers the earliest unanswered call with its id made before it (ids may
    repeat across replies: some servers number calls ``call_0`` in every reply). A tool message
    with no such call (an orphan, or a second answer to one call) is left out.
    """
    unanswered: dict[str, deque[tuple[int, int]]] = {}
    answers: dict[tuple[int, int], ToolMessage] = {}
    for i, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for j, call in enumerate(message.tool_calls):
                unanswered.setdefault(call.id, deque()).append((i, j))
        elif isinstance(message, ToolMessage):
            waiting = unanswered.get(message.tool_call_id)
            if waiting:
                answers[waiting.popleft()] = message
    return answers


def sanitize_history(messages: Sequence[Message]) -> list[Message]:
    """A history a strict OpenAI-compatible server accepts, from any prefix of a conversation.

    Every assistant message is followed by exactly one ``tool`` message per call, in call
    order, before anything else: a result that arrived later (after a user or assistant
    message) is moved back into place; a call without a result gets an error result saying the
    session was interrupted; a ``tool`` message answering no earlier call, and any second
    answer to one call, is dropped. Every other message keeps its order, so the system message
    stays first. Pure: the input is not changed, and ``sanitize_history`` of its own output
    returns an equal list.

    Args:
        messages: A conversation, e.g. ``history_from_records(read_transcript(path))``.

    Returns:
        A new list, accepted by ``check_strict``.
    """
    answers = _match_results(messages)
    out: list[Message] = []
    for i, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            continue  # placed after its call below, or dropped
        out.append(message)
        if isinstance(message, AssistantMessage):
            for j, call in enumerate(message.tool_calls):
                out.append(answers.get((i, j)) or interrupted_result(call))
    return out


@dataclass(frozen=True, kw_only=True)
class _Item:
    """What the strict rule looks at in one message."""

    role: str
    call_ids: tuple[str, ...] = ()
    tool_call_id: str | None = None


class StrictHistoryError(ValueError):
    """The HTTP 400 a strict OpenAI-compatible server answers for a broken tool-call history.

    Attributes:
        status_code: Always 400.
        index: Index of the offending message in the request's ``messages``.
        param: OpenAI's ``param`` field, ``messages.[<index>].role``.
    """

    status_code = 400

    def __init__(self, message: str, *, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.index = index
        self.param = f"messages.[{index}].role"

    def response_body(self) -> dict[str, Any]:
        """The JSON body a server sends with the 400 (OpenAI's error shape)."""
        return {
            "error": {
                "message": self.message,
                "type": "invalid_request_error",
                "param": self.param,
                "code": None,
            }
        }


def _check_items(items: Sequence[_Item]) -> None:
    i = 0
    while i < len(items):
        at, item = i, items[i]
        if item.role == "tool":
            raise StrictHistoryError(ORPHAN_RESULT, index=at)
        i += 1
        if item.role != "assistant" or not item.call_ids:
            continue
        expected = Counter(item.call_ids)
        while i < len(items) and items[i].role == "tool":
            answered = items[i].tool_call_id
            if answered is None or expected[answered] <= 0:
                raise StrictHistoryError(ORPHAN_RESULT, index=i)
            expected[answered] -= 1
            i += 1
        missing = [call_id for call_id in dict.fromkeys(item.call_ids) if expected[call_id] > 0]
        if missing:
            raise StrictHistoryError(MISSING_RESULTS.format(ids=", ".join(missing)), index=at)


def check_strict(messages: Sequence[Message]) -> None:
    """Apply the tool-call rule of strict OpenAI-compatible servers to a history.

    The rule: the messages right after an assistant message with ``tool_calls`` are ``tool``
    messages answering each of its call ids; a ``tool`` message anywhere else, or answering an id
    that is not one of those calls, is refused. A second answer to one call is refused too (a
    little stricter than some servers; the sanitizer never produces one).

    Raises:
        StrictHistoryError: With the server's text (see ``MISSING_RESULTS``, ``ORPHAN_RESULT``).
    """
    _check_items([_item(m) for m in messages])


def _item(message: Message) -> _Item:
    if isinstance(message, AssistantMessage):
        return _Item(role="assistant", call_ids=tuple(c.id for c in message.tool_calls))
    if isinstance(message, ToolMessage):
        return _Item(role="tool", tool_call_id=message.tool_call_id)
    return _Item(role=message.role)


def _wire_item(message: Mapping[str, Any]) -> _Item:
    role = str(message.get("role"))
    calls = message.get("tool_calls") or []
    call_ids = tuple(str(c.get("id")) for c in calls if isinstance(c, Mapping))
    tool_call_id = message.get("tool_call_id")
    return _Item(
        role=role,
        call_ids=call_ids,
        tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
    )


def check_strict_wire(messages: Sequence[Mapping[str, Any]]) -> None:
    """``check_strict`` on a request body's ``messages`` in the Chat Completions wire shape.

    For fake servers: assistant messages carry ``tool_calls: [{"id": ...}, ...]`` and tool
    messages ``tool_call_id``.

    Raises:
        StrictHistoryError: As ``check_strict``.
    """
    _check_items([_wire_item(m) for m in messages])
