"""A session: a workflow of movements over one shared conversation, and how it ends.

Between movements the live history goes through the same sanitizer as a replayed transcript,
so no tool call is ever left without its tool message; at the end of each movement a memory
checkpoint (what was done, what is next) is written into the conversation and the transcript.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import anyio

from cadenza.engine.context import ContextLimits, ContextManager
from cadenza.engine.events import CheckpointWritten, MovementStarted, SessionFinished, StopReason
from cadenza.engine.history import sanitize_history
from cadenza.engine.ports import Editor
from cadenza.engine.prompt import DEFAULT_SYSTEM_PROMPT, system_prompt
from cadenza.engine.results import (
    Completed,
    MovementResult,
    NextMovement,
    result_message,
    stop_reason_of,
)
from cadenza.engine.runner import CUT_ARGUMENTS, BudgetSpent, MovementRunner
from cadenza.engine.runtime import Recorder, Runtime, SessionSettings
from cadenza.engine.workflows import Movement, Workflow, default_workflow
from cadenza.messages import Message, SystemMessage, UserMessage
from cadenza.providers.base import Provider, ProviderError
from cadenza.tools.registry import ToolRegistry, default_tools

__all__ = ["CUT_ARGUMENTS", "Session", "SessionOutcome", "SessionSettings"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class SessionOutcome:
    """How a session ended; ``missing_info``/``why_no_default`` for ``needs_user_input``."""

    stop_reason: StopReason
    message: str
    steps: int
    missing_info: str | None = None
    why_no_default: str | None = None


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
        workflow: Workflow | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        self.session_id = session_id
        self.task = task
        self.settings = settings or SessionSettings()
        template = self.settings.system_prompt or DEFAULT_SYSTEM_PROMPT
        messages: list[Message] = [
            SystemMessage(content=system_prompt(root, template)),
            UserMessage(content=task, tag="task"),
        ]
        self.rt = Runtime(
            session_id=session_id,
            root=root,
            workflow=workflow or default_workflow(),
            provider=provider,
            editor=editor,
            tools=tools or default_tools(),
            settings=self.settings,
            recorder=recorder,
            messages=[],
            context=ContextManager(ContextLimits(context_size=self.settings.context_size)),
        )
        for message in messages:
            self.rt.append(message)

    @property
    def messages(self) -> list[Message]:
        """The live conversation."""
        return self.rt.messages

    @property
    def steps(self) -> int:
        """Model requests made so far."""
        return self.rt.steps

    async def run(self) -> SessionOutcome:
        """Run the workflow until it ends, the step bound, a cancel, or an error.

        Publishes ``SessionFinished`` last in every case, cancellation included (then it
        re-raises the cancellation, after closing any unanswered tool call).
        """
        try:
            outcome = await self._run_workflow()
        except ProviderError as exc:
            outcome = self._outcome("error", str(exc))
        except anyio.get_cancelled_exc_class():
            self.rt.messages[:] = sanitize_history(self.rt.messages)
            self.rt.publish(SessionFinished(stop_reason="cancelled", steps=self.rt.steps))
            raise
        except Exception as exc:
            log.exception("session %s failed", self.session_id)
            outcome = self._outcome("error", f"internal error: {type(exc).__name__}: {exc}")
        self.rt.publish(
            SessionFinished(
                stop_reason=outcome.stop_reason,
                message=outcome.message,
                steps=outcome.steps,
                missing_info=outcome.missing_info,
                why_no_default=outcome.why_no_default,
            )
        )
        return outcome

    def end_before_start(self) -> None:
        """Publish ``session_end`` (cancelled) for a session cancelled before ``run``."""
        self.rt.publish(SessionFinished(stop_reason="cancelled", steps=0))

    def _outcome(self, reason: StopReason, message: str) -> SessionOutcome:
        return SessionOutcome(stop_reason=reason, message=message, steps=self.rt.steps)

    async def _run_workflow(self) -> SessionOutcome:
        workflow = self.rt.workflow
        movement: Movement = workflow.movements[0]
        reason = ""
        for index in range(1, 10_000):
            self.rt.publish(
                MovementStarted(
                    workflow=workflow.name, movement=movement.name, index=index, reason=reason
                )
            )
            if len(workflow.movements) > 1:
                self.rt.append(UserMessage(tag="movement", content=movement_prompt(movement)))
            runner = MovementRunner(self.rt, movement)
            result = await runner.run()
            self._checkpoint(runner, result)
            if isinstance(result, BudgetSpent):
                return self._outcome(
                    "max_steps",
                    f"stopped after {self.settings.max_steps} step"
                    f"{'' if self.settings.max_steps == 1 else 's'} without finishing",
                )
            if not isinstance(result, NextMovement):
                return self._final(result)
            # The live path uses the replay sanitizer between movements: nothing dangles.
            self.rt.messages[:] = sanitize_history(self.rt.messages)
            following = workflow.movement(result.movement)
            assert following is not None  # control.decide and Workflow validation ensure it
            movement, reason = following, result.reason
        raise RuntimeError("workflow did not end")  # unreachable: the step budget ends it

    def _final(self, result: MovementResult) -> SessionOutcome:
        missing = result.missing_info if isinstance(result, Completed) else None
        why = result.why_no_default if isinstance(result, Completed) else None
        return SessionOutcome(
            stop_reason=stop_reason_of(result),
            message=result_message(result),
            steps=self.rt.steps,
            missing_info=missing,
            why_no_default=why,
        )

    def _checkpoint(self, runner: MovementRunner, result: MovementResult | BudgetSpent) -> None:
        """Write the movement's memory checkpoint: what was done, how it ended, what is next."""
        done = (
            f"edited {', '.join(dict.fromkeys(runner.edited))}"
            if runner.edited
            else f"{runner.calls} tool calls, no edits"
        )
        following = result.movement if isinstance(result, NextMovement) else "end of the task"
        ending = (
            "the session's step bound ran out"
            if isinstance(result, BudgetSpent)
            else f"{result.kind}: {result_message(result)[:300]}"
        )
        note = (
            f"Checkpoint after movement {runner.movement.name!r} ({runner.steps} steps): "
            f"{done}. Result: {ending}. Next: {following}."
        )
        if self.rt.recorder is not None:
            self.rt.recorder.on_checkpoint(runner.movement.name, note)
        self.rt.publish(CheckpointWritten(movement=runner.movement.name, note=note))
        if isinstance(result, NextMovement):
            self.rt.append(UserMessage(tag="checkpoint", content=note))


def movement_prompt(movement: Movement) -> str:
    """The user message that starts a movement: its name, instructions and tools."""
    tools = ", ".join(movement.tools) if movement.tools is not None else "all workspace tools"
    return (
        f"Movement {movement.name!r} starts. {movement.instructions}\n"
        f"Tools in this movement: {tools}; plus transition and complete."
    )
