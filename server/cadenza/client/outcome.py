"""How one run of a session ends: :class:`RunResult`, and the tracking that decides it.

A run's result holds the server's ``SessionOutcome`` (the ``session_end`` it sent) beside what
only the client knows: the files it changed on disk, the wall time, the tokens used.

The run ends with the server's ``session_end``, except when the session stops to wait for the
person (``needs_user_input``, ``waiting_human``): then the server prompts next, and an answer
resumes the session (the result is a later ``session_end``), while a declined prompt, or none
within ``PROMPT_GRACE_S``, makes the waiting end the result.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from cadenza.client.edits import FileChange
from cadenza.client.events import ClientEvent, UserAsked
from cadenza.client.summary import merge_changes
from cadenza.schema.outcome import SessionOutcome
from cadenza.schema.updates import ModelReply, SessionEnd, ToolCall, ToolCallUpdate, ToolDiff

PROMPT_GRACE_S = 5.0
"""Seconds to wait for the server's prompt after a waiting ``session_end`` (older servers
send none); then the waiting end is the outcome."""

PANEL_ANSWER = "Answer in the agent panel"
"""The prompt's choice that leaves the answer for later: the waiting end is the result."""


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Tokens the session's model requests used, summed from ``model_reply`` updates.

    Attributes:
        requests: Model replies seen.
        prompt_tokens: Input tokens (0 when the provider reports none).
        completion_tokens: Output tokens (0 when the provider reports none).
    """

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, reply: ModelReply) -> Usage:
        """This usage plus one reply's."""
        return Usage(
            requests=self.requests + 1,
            prompt_tokens=self.prompt_tokens + (reply.prompt_tokens or 0),
            completion_tokens=self.completion_tokens + (reply.completion_tokens or 0),
        )


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """How a run of a session ended, as the headless client saw it.

    Attributes:
        session_id: The server's id of the session.
        outcome: How the server said the run ended (its ``session_end``).
        changes: Files changed on disk, one entry per path.
        wall_time: Seconds from ``cadenza.startSession`` to ``session_end``.
        usage: Tokens used by this run's model requests.
    """

    session_id: str
    outcome: SessionOutcome
    changes: tuple[FileChange, ...]
    wall_time: float
    usage: Usage = Usage()


@dataclass(kw_only=True)
class RunTracker:
    """What the client has seen of its session, and the futures its end resolves."""

    session_id: str | None = None
    started: float = 0.0
    end: asyncio.Future[SessionEnd] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    exited: asyncio.Future[int | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    changes: list[FileChange] = field(default_factory=list)
    waiting: SessionEnd | None = None
    """A ``session_end`` after which the session waits for the person (the server asks next)."""
    grace: asyncio.TimerHandle | None = None
    usage: Usage = Usage()
    touched: set[str] = field(default_factory=set)
    """Files the server said the session changed (the diffs of its calls), absolute paths."""
    rewritten: set[str] = field(default_factory=set)
    """Those of them its commands changed (a diff of an ``execute`` call)."""
    _kinds: dict[str, str] = field(default_factory=dict)

    def begin(self, session_id: str | None = None) -> None:
        """A run starts now (``cadenza.startSession`` or ``cadenza.replySession`` is sent)."""
        self.started = time.monotonic()
        if self.end.done():  # the next turn of the same session: its own end, edits and usage
            self.end = asyncio.get_running_loop().create_future()
            self.waiting = None
            self.changes = []
            self.usage = Usage()
            self.touched, self.rewritten, self._kinds = set(), set(), {}
        if session_id is not None:
            self.session_id = session_id

    def see(self, event: ClientEvent) -> None:
        """Resolve the run's end from ``event`` (see the module docstring)."""
        if self.end.done():
            return
        if isinstance(event, ModelReply):
            self.usage = self.usage.add(event)
        elif isinstance(event, ToolCall | ToolCallUpdate):
            self._note_call(event)
        elif isinstance(event, SessionEnd):
            if event.waiting:
                self.waiting = event
                self.grace = asyncio.get_running_loop().call_later(
                    PROMPT_GRACE_S, self.settle_waiting
                )
            else:
                self.end.set_result(event)
        elif isinstance(event, UserAsked) and self.waiting is not None:
            if self.grace is not None:
                self.grace.cancel()
            if event.answer is None or event.answer == PANEL_ANSWER:
                self.settle_waiting()
            else:
                self.waiting = None  # it resumes; its next session_end counts

    def _note_call(self, event: ToolCall | ToolCallUpdate) -> None:
        """Remember each call's kind, and the files the diffs of its updates name."""
        if isinstance(event, ToolCall):
            self._kinds[event.tool_call_id] = event.kind
            return
        paths = {block.path for block in event.content if isinstance(block, ToolDiff)}
        self.touched |= paths
        if self._kinds.get(event.tool_call_id) == "execute":
            self.rewritten |= paths

    def settle_waiting(self) -> None:
        """The waiting ``session_end`` is the result (no answer came)."""
        if self.waiting is not None and not self.end.done():
            self.end.set_result(self.waiting)

    def server_exited(self, code: int | None) -> None:
        """The server process ended with status ``code``."""
        if not self.exited.done():
            self.exited.set_result(code)

    async def ended(self) -> bool:
        """Wait for the run's end or the server's exit; True when the run ended."""
        waiters: list[asyncio.Future[Any]] = [self.end, self.exited]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        return self.end.done()

    def result(self) -> RunResult:
        """The result of the ended run (call once :meth:`ended` is True)."""
        end = self.end.result()
        return RunResult(
            session_id=self.session_id or "",
            outcome=end.outcome(),
            changes=merge_changes(self.changes),
            wall_time=time.monotonic() - self.started,
            usage=self.usage,
        )
