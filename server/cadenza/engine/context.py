"""Context pressure: count tokens per request, compact above a soft limit, exit above a hard one.

Token counts come from the provider's reported usage when known (``prompt_tokens +
completion_tokens`` of the last reply covers the history up to it), plus an estimate of what was
appended since; without usage, the whole history is estimated. The estimate is ~4 characters a
token, memoized per message so a long session costs linear, not quadratic, work.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cadenza.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    Usage,
    UserMessage,
)

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
Pressure = Literal["ok", "soft", "hard"]


def estimate_tokens(message: Message) -> int:
    """A rough token count of one message (characters / 4, plus framing)."""
    size = len(message.content)
    if isinstance(message, AssistantMessage):
        size += sum(len(c.name) + len(c.arguments) + 16 for c in message.tool_calls)
    return size // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS


@dataclass(kw_only=True)
class ContextLimits:
    """Limits in tokens, from the model's context size.

    Attributes:
        context_size: The model's context window (tokens).
        soft_ratio: Above this share of the window, compact older turns.
        hard_ratio: Above this share (after compaction), force the movement to exit.
        reply_reserve: Tokens kept free for the reply.
        result_share: Largest share of the window one tool result may take.
    """

    context_size: int
    soft_ratio: float = 0.7
    hard_ratio: float = 0.9
    reply_reserve: int = 1024
    result_share: float = 0.25

    @property
    def soft(self) -> int:
        """Compaction threshold (tokens)."""
        return int(self.context_size * self.soft_ratio) - self.reply_reserve

    @property
    def hard(self) -> int:
        """Forced-exit threshold (tokens)."""
        return int(self.context_size * self.hard_ratio) - self.reply_reserve

    @property
    def result_chars(self) -> int:
        """Largest tool result kept whole (characters)."""
        return max(2_000, int(self.context_size * self.result_share) * CHARS_PER_TOKEN)


def bound_result(content: str, max_chars: int) -> str:
    """Cut a tool result over ``max_chars`` characters to its start and end, with a note.

    The start (two thirds) and the end (one third) are kept: a command's error or a file's
    last lines are at the end. The note says how much was left out and how to see a part, so
    the model narrows its call instead of repeating it.
    """
    if len(content) <= max_chars:
        return content
    budget = max(max_chars - 300, 0)
    head_chars = budget * 2 // 3
    head, tail = content[:head_chars], content[len(content) - (budget - head_chars) :]
    omitted = len(content) - len(head) - len(tail)
    return (
        f"{head}\n[result truncated: {omitted} of {len(content)} characters omitted here, the "
        "start and the end are shown; read a part with read_file offset and limit, narrow the "
        "search, or filter a command's output (| grep, | tail)]\n"
        f"{tail}"
    )


class ContextManager:
    """Tracks the size of the history and compacts it."""

    def __init__(self, limits: ContextLimits) -> None:
        self.limits = limits
        self._memo: dict[int, tuple[Message, int]] = {}
        self._known: tuple[int, int] | None = None  # (messages covered, tokens)

    def _estimate(self, message: Message) -> int:
        cached = self._memo.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        tokens = estimate_tokens(message)
        self._memo[id(message)] = (message, tokens)
        return tokens

    def record_usage(self, usage: Usage | None, covered: int) -> None:
        """Remember the provider's count: ``usage`` covers the first ``covered`` messages."""
        if usage is not None and usage.total_tokens > 0:
            self._known = (covered, usage.total_tokens)

    def tokens(self, messages: list[Message]) -> int:
        """The history's size in tokens (reported where known, estimated for the rest)."""
        if self._known is not None and self._known[0] <= len(messages):
            covered, tokens = self._known
            return tokens + sum(self._estimate(m) for m in messages[covered:])
        return sum(self._estimate(m) for m in messages)

    def pressure(self, messages: list[Message]) -> Pressure:
        """``ok``, ``soft`` (compact) or ``hard`` (force the movement to exit)."""
        tokens = self.tokens(messages)
        if tokens > self.limits.hard:
            return "hard"
        if tokens > self.limits.soft:
            return "soft"
        return "ok"

    def compact(self, messages: list[Message], keep_checkpoints: int = 2) -> list[Message]:
        """Summarize older turns into one message; keep what must stay.

        Kept whole: the system message, the workspace, the task, the latest
        ``keep_checkpoints`` checkpoints, and the most recent turns (each assistant message
        with all its tool messages, so no tool call loses its result) within a third of the
        soft limit. The rest becomes one summary message listing each earlier call and the
        first line of its result.

        Returns:
            The new history (the same list when nothing can be summarized).
        """
        self._known = None  # the provider's count no longer applies
        head: list[Message] = []
        for m in messages[:3]:  # system, the workspace (in newer sessions), the task
            if not (
                isinstance(m, SystemMessage) or (isinstance(m, UserMessage) and m.tag in HEAD_TAGS)
            ):
                break
            head.append(m)
        body = messages[len(head) :]
        start = _tail_start(body, budget=max(self.limits.soft // 3, 1), size=self._estimate)
        older, tail = body[:start], body[start:]
        if not older:
            return messages
        checkpoints = [m for m in older if isinstance(m, UserMessage) and m.tag == "checkpoint"]
        kept = checkpoints[-keep_checkpoints:]
        summary = UserMessage(tag="summary", content=_summarize(older))
        return [*head, summary, *kept, *tail]


HEAD_TAGS = frozenset({None, "workspace", "task"})
"""User messages kept at the head of a compacted history (``None``: an untagged first message)."""


def _tail_start(body: list[Message], *, budget: int, size: Callable[[Message], int]) -> int:
    """Index where the kept tail begins: turn boundaries only, at least the last turn.

    A turn starts at a message that is not a tool result, so a tail never begins with a tool
    message whose call was summarized away.
    """
    starts = [i for i, m in enumerate(body) if not isinstance(m, ToolMessage)]
    chosen, used = len(body), 0
    for start in reversed(starts):
        turn = sum(size(m) for m in body[start:chosen])
        if chosen != len(body) and used + turn > budget:
            break
        used, chosen = used + turn, start
    return chosen if starts else 0


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit] + ("…" if len(line) > limit else "")


def _summarize(older: list[Message]) -> str:
    results = {m.tool_call_id: m for m in older if isinstance(m, ToolMessage)}
    lines = ["Summary of earlier steps (older turns were compacted to save context):"]
    for m in older:
        if isinstance(m, UserMessage) and m.tag == "summary":
            lines.extend(m.content.splitlines()[1:])
        elif isinstance(m, UserMessage):
            lines.append(f"- [{m.tag or 'user'}] {_first_line(m.content)}")
        elif isinstance(m, AssistantMessage):
            if m.content.strip():
                lines.append(f"- you said: {_first_line(m.content)}")
            for c in m.tool_calls:
                r = results.get(c.id)
                outcome = ("error: " if r and r.is_error else "") + (
                    _first_line(r.content) if r else "no result"
                )
                lines.append(f"- {c.name} {_compact_args(c.arguments)} → {outcome}")
    return "\n".join(lines)


def _compact_args(arguments: str, limit: int = 120) -> str:
    try:
        text = json.dumps(json.loads(arguments), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        text = arguments
    return text[:limit] + ("…" if len(text) > limit else "")
