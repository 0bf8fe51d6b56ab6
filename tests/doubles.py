"""Test doubles for unit tests only: a scripted model and an in-memory editor.

Never used by the end-to-end or protocol suites, which run real processes.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from cadenza.engine.events import SessionEvent
from cadenza.engine.permissions import PermissionAnswer, PermissionRequest
from cadenza.messages import AssistantReply, FinishReason, ToolCall
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from cadenza.providers.envelope import envelope_reply
from cadenza.tools.fs import apply_on_disk
from cadenza.tools.host import DocumentSnapshot, EditOutcome, FileEdit
from cadenza.tools.intel import CodeIntel


def call(name: str, _id: str | None = None, **arguments: Any) -> ToolCall:
    """A tool call with JSON arguments."""
    return ToolCall(
        id=_id or f"call_{name}_{len(json.dumps(arguments))}",
        name=name,
        arguments=json.dumps(arguments),
    )


def reply(
    *calls: ToolCall, content: str = "", finish: FinishReason | None = None
) -> AssistantReply:
    """A scripted model reply."""
    return AssistantReply(
        content=content,
        tool_calls=list(calls),
        finish_reason=finish or ("tool_calls" if calls else "stop"),
    )


class ScriptedProvider:
    """Replays replies in order; records each request. An exception in the script is raised."""

    def __init__(self, script: Sequence[AssistantReply | Exception]) -> None:
        self.script = list(script)
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return "scripted/test"

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        self.requests.append(request)
        if not self.script:
            raise ProviderError("script exhausted")
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    async def aclose(self) -> None:
        return None


class LoopingProvider(ScriptedProvider):
    """Returns the same reply forever."""

    def __init__(self, item: AssistantReply) -> None:
        super().__init__([])
        self.item = item

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        self.requests.append(request)
        return self.item


class StreamingProvider(ScriptedProvider):
    """Streams a JSON-envelope reply delta by delta through the request's ``watch``, as the
    local provider does: ``head``, then ``delta(i)`` for i = 0, 1, ... forever.

    The reply ends only when the watch stops it (then it is normalized as the local provider
    normalizes a stopped envelope: one cut call, ``repetition``), or when the caller cancels
    it. ``delay_s`` between deltas stands for the model's decoding speed.
    """

    def __init__(
        self, delta: Callable[[int], str], *, head: str = "", delay_s: float = 0.001
    ) -> None:
        super().__init__([])
        self.delta = delta
        self.head = head
        self.delay_s = delay_s
        self.deltas: list[int] = []
        """Deltas streamed per request."""

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        self.requests.append(request)
        self.deltas.append(0)
        pieces = itertools.chain(
            [self.head] if self.head else [], map(self.delta, itertools.count())
        )
        text: list[str] = []
        for piece in pieces:
            await anyio.sleep(self.delay_s)
            text.append(piece)
            self.deltas[-1] += 1
            if request.watch is not None and request.watch(piece):
                break
        return envelope_reply(
            "".join(text), finish_reason="repetition", usage=None, id_prefix="stream"
        )


@dataclass
class MemoryEditor:
    """An editor with optional open buffers; applies edits to disk unless told to refuse."""

    buffers: dict[Path, DocumentSnapshot] = field(default_factory=dict)
    refuse: str | None = None
    refused_by: Literal["editor", "person", "cadenza"] = "editor"
    """Who refuses the edits under ``refuse`` (``person``: as a declined review)."""
    answers: list[str | None] = field(default_factory=list)
    events: list[SessionEvent] = field(default_factory=list)
    edits: list[FileEdit] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    permissions: list[PermissionAnswer | None] = field(default_factory=list)
    """Answers to permission prompts, in order; None never answers (the prompt hangs)."""
    asked: list[PermissionRequest] = field(default_factory=list)

    def code_intel(self) -> CodeIntel | None:
        """No editor-side language intelligence (yet): the host may start its own server."""
        return None

    def open_document(self, path: Path) -> DocumentSnapshot | None:
        return self.buffers.get(path)

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        if self.refuse is not None:
            return EditOutcome(applied=False, reason=self.refuse, refused_by=self.refused_by)
        if edit.path in self.buffers and edit.kind == "change":
            old = self.buffers[edit.path]
            self.buffers[edit.path] = DocumentSnapshot(
                path=edit.path, text=edit.new_text, version=(old.version or 0) + 1
            )
        else:
            outcome = apply_on_disk(edit)  # the server's own disk writer: bytes kept exact
            if not outcome.applied:
                return outcome
        self.edits.append(edit)
        return EditOutcome(applied=True)

    async def ask_user(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else None

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        answer = (
            self.permissions.pop(0)
            if self.permissions
            else PermissionAnswer(outcome="selected", option="allow_once")
        )
        if answer is None:
            await anyio.sleep_forever()
        assert answer is not None
        return answer

    def publish(self, event: SessionEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]
