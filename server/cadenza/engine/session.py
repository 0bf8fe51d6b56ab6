"""A session: the conversation, the turn loop, the step bound, and the events it publishes."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import anyio

from cadenza.engine.events import (
    AgentMessageChunk,
    FileEdited,
    SessionFinished,
    StepStarted,
    StopReason,
    ToolCallFinished,
    ToolCallStarted,
)
from cadenza.engine.ports import Editor
from cadenza.engine.prompt import DEFAULT_SYSTEM_PROMPT, system_prompt
from cadenza.engine.steps import FinishTurn, RunTools, resolve_step
from cadenza.engine.stuck import StuckDetector
from cadenza.messages import Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from cadenza.providers.base import ModelRequest, Provider, ProviderError, ToolChoice
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.paths import relative_name
from cadenza.tools.registry import ToolRegistry, default_tools

log = logging.getLogger(__name__)

CUT_ARGUMENTS = (
    "your reply was cut by the token limit before this call's arguments were complete; the "
    "call was not run and nothing was written. Make the call again with shorter arguments "
    "(for example a smaller edit)."
)


@dataclass(kw_only=True)
class SessionSettings:
    """Per-session knobs.

    Attributes:
        max_steps: Model requests allowed in the session before it ends with ``max_steps``.
        system_prompt: Template with ``{root}``.
        max_tokens: Completion bound per model request (tokens), or None.
        temperature: Sampling temperature, or None for the provider's default.
        first_step_tool_choice: Tool choice of the first model request of a turn. ``required``
            (the default) makes the model look before it answers, so it cannot claim a change
            it never made; later requests are ``auto``, so an empty call list ends the turn.
    """

    max_steps: int = 25
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    max_tokens: int | None = None
    temperature: float | None = None
    first_step_tool_choice: ToolChoice = "required"


@dataclass(frozen=True, kw_only=True)
class SessionOutcome:
    """How a session ended."""

    stop_reason: StopReason
    message: str
    steps: int


class _StreamSink:
    """Forwards streamed text as ``agent_message_chunk`` and remembers that it did."""

    def __init__(self, editor: Editor) -> None:
        self.editor = editor
        self.used = False

    def __call__(self, delta: str) -> None:
        self.used = True
        self.editor.publish(AgentMessageChunk(text=delta))


class Session:
    """One agent session on one workspace root."""

    def __init__(
        self,
        *,
        session_id: str,
        task: str,
        root: Path,
        provider: Provider,
        editor: Editor,
        tools: ToolRegistry | None = None,
        settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.task = task
        self.root = root
        self.provider = provider
        self.editor = editor
        self.tools = tools or default_tools()
        self.settings = settings or SessionSettings()
        self.steps = 0
        self.messages: list[Message] = [
            SystemMessage(content=system_prompt(root, self.settings.system_prompt)),
            UserMessage(content=task),
        ]
        self._stuck = StuckDetector()
        self._ctx = ToolContext(root=root, host=editor)

    async def run(self) -> SessionOutcome:
        """Run the task until the model ends its turn, the step bound, cancel or an error.

        Publishes ``SessionFinished`` last in every case, cancellation included (then it
        re-raises the cancellation).
        """
        try:
            outcome = await self._run_turn()
        except ProviderError as exc:
            outcome = self._outcome("error", str(exc))
        except anyio.get_cancelled_exc_class():
            self._close_dangling_calls("the session was cancelled before this call ran")
            self.editor.publish(SessionFinished(stop_reason="cancelled", steps=self.steps))
            raise
        except Exception as exc:
            log.exception("session %s failed", self.session_id)
            outcome = self._outcome("error", f"internal error: {type(exc).__name__}: {exc}")
        self.editor.publish(
            SessionFinished(
                stop_reason=outcome.stop_reason, message=outcome.message, steps=outcome.steps
            )
        )
        return outcome

    def _outcome(self, reason: StopReason, message: str) -> SessionOutcome:
        return SessionOutcome(stop_reason=reason, message=message, steps=self.steps)

    async def _run_turn(self) -> SessionOutcome:
        while self.steps < self.settings.max_steps:
            self.steps += 1
            self.editor.publish(StepStarted(step=self.steps, max_steps=self.settings.max_steps))
            streamed = _StreamSink(self.editor)
            reply = await self.provider.complete(self._request(), on_text=streamed)
            if reply.content and not streamed.used:
                self.editor.publish(AgentMessageChunk(text=reply.content))
            self.messages.append(reply.to_message())
            step = resolve_step(reply)
            if isinstance(step, FinishTurn):
                return self._outcome("end_turn", step.content)
            await self._run_tools(step)
        return self._outcome(
            "max_steps", f"stopped after {self.settings.max_steps} steps without finishing"
        )

    @property
    def _first_step(self) -> bool:
        return not any(isinstance(m, ToolMessage) for m in self.messages)

    def _request(self) -> ModelRequest:
        return ModelRequest(
            messages=list(self.messages),
            tools=self.tools.specs(),
            max_tokens=self.settings.max_tokens,
            temperature=self.settings.temperature,
            tool_choice=self.settings.first_step_tool_choice if self._first_step else "auto",
        )

    async def _run_tools(self, step: RunTools) -> None:
        """Run a batch of calls in order; each gets exactly one tool message, in call order."""
        for call in step.tool_calls:
            result = await self._run_one(call, cut=step.cut)
            self.messages.append(
                ToolMessage(
                    tool_call_id=call.id,
                    name=call.name,
                    content=result.content,
                    is_error=result.is_error,
                )
            )

    async def _run_one(self, call: ToolCall, *, cut: bool) -> ToolResult:
        prepared = prepare(call, self.tools)
        title = prepared.title if isinstance(prepared, PreparedCall) else call.name
        kind = prepared.tool.kind if isinstance(prepared, PreparedCall) else "other"
        self.editor.publish(
            ToolCallStarted(
                tool_call_id=call.id,
                name=call.name,
                title=title,
                tool_kind=kind,
                raw_input=call.arguments,
            )
        )
        result = self._observe(call, prepared, cut)
        if result is None and isinstance(prepared, PreparedCall):
            result = await run(prepared, self._ctx)
        assert result is not None
        for edit in result.edits:
            self._stuck.workspace_changed()
            self.editor.publish(
                FileEdited(
                    tool_call_id=call.id,
                    path=relative_name(self.root, edit.path),
                    old_text=edit.old_text,
                    new_text=edit.new_text,
                )
            )
        self.editor.publish(
            ToolCallFinished(
                tool_call_id=call.id,
                content=result.content,
                status="failed" if result.is_error else "completed",
            )
        )
        return result

    def _observe(
        self, call: ToolCall, prepared: PreparedCall | ToolResult, cut: bool
    ) -> ToolResult | None:
        """Answer a call without running it: cut arguments, invalid call, or a repeat."""
        if cut:
            return ToolResult(content=CUT_ARGUMENTS, is_error=True)
        if isinstance(prepared, ToolResult):
            return prepared
        note = self._stuck.check(call, self.steps)
        if note is not None:
            return ToolResult(content=note, is_error=True)
        return None

    def _close_dangling_calls(self, reason: str) -> None:
        """Give every unanswered tool call a tool message, so the history stays valid (F10)."""
        answered = {m.tool_call_id for m in self.messages if isinstance(m, ToolMessage)}
        for message in list(self.messages):
            if message.role != "assistant":
                continue
            for call in message.tool_calls:
                if call.id not in answered:
                    self.messages.append(
                        ToolMessage(
                            tool_call_id=call.id, name=call.name, content=reason, is_error=True
                        )
                    )
