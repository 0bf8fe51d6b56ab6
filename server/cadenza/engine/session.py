"""A session: a workflow of movements over one shared conversation, and how it ends.

Between movements the live history goes through the same sanitizer as a replayed transcript,
so no tool call is ever left without its tool message; at the end of each movement a memory
checkpoint (what was done, what is next) is written into the conversation and the transcript.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from cadenza.engine.budget import RunClock, duration
from cadenza.engine.context import ContextLimits, ContextManager
from cadenza.engine.events import (
    CheckpointWritten,
    FilesSeen,
    MovementStarted,
    RulesLoaded,
    SessionFinished,
    SessionResumed,
)
from cadenza.engine.history import sanitize_history
from cadenza.engine.intel_offer import intel_rule, offer_intel
from cadenza.engine.loop import BudgetSpent, MovementRunner
from cadenza.engine.outcome import resume_message
from cadenza.engine.permissions import PermissionGate
from cadenza.engine.pipeline import CUT_ARGUMENTS
from cadenza.engine.ports import CommandWatch, Editor
from cadenza.engine.prime import task_files
from cadenza.engine.prompt import default_template, opening_messages
from cadenza.engine.results import Ended, MovementResult, NextMovement
from cadenza.engine.rules import ProjectRules, project_rules
from cadenza.engine.runtime import Recorder, Runtime, SessionSettings
from cadenza.engine.seen import seen_files, still_seen
from cadenza.engine.workflows import Movement, Workflow, default_workflow
from cadenza.messages import Message, UserMessage
from cadenza.providers.base import Provider, ProviderError
from cadenza.providers.text_person import person_text
from cadenza.schema.outcome import SessionOutcome
from cadenza.secrets import redact_then_cut
from cadenza.tools.base import Tool
from cadenza.tools.dispatch.cache import ReadCache
from cadenza.tools.intel import CodeIntel
from cadenza.tools.registry import ToolRegistry, default_tools
from cadenza.tools.resources import SessionResources
from cadenza.types import StopReason

__all__ = [
    "CUT_ARGUMENTS",
    "Session",
    "SessionSettings",
    "resume_message",
]

log = logging.getLogger(__name__)


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
        permissions: PermissionGate | None = None,
        history: list[Message] | None = None,
        last: SessionOutcome | None = None,
        stopped_in: str | None = None,
        open_document: Path | None = None,
        intel: CodeIntel | None = None,
        command_watch: CommandWatch | None = None,
        resources: SessionResources | None = None,
    ) -> None:
        """Create a session; ``history`` and ``last`` restore one from its transcript.

        Args:
            session_id: The session's id (transcript file name, in every update).
            task: What the person asked for.
            root: The workspace root (absolute, resolved).
            provider: The model.
            editor: The editor port (buffers, edits, prompts, events).
            tools: The workspace tools (default: ``default_tools()``).
            settings: Per-session knobs (default: ``SessionSettings()``).
            workflow: The workflow to run (default: the single-movement ``default``).
            recorder: The transcript (None: none).
            permissions: The gate for gated tools; default asks ``editor`` with the
                settings' gated tools and timeout, remembering nothing.
            history: The conversation so far (already sanitized); default: the system prompt
                and ``task``. A restored history is not recorded again.
            last: How the restored session's last run ended (``resume`` continues it).
            stopped_in: The movement the restored session was in when it stopped.
            open_document: The file focused in the editor when the task was given (primed
                first when the loop variant primes files).
            intel: Language servers Cadenza starts itself, used where the editor offers no
                code intelligence; the code-intelligence tools are offered when either serves
                the workspace (``engine.intel_offer``).
            command_watch: Records the files each command changes, for review and undo
                (None: not recorded).
            resources: What its tools hold (browser sessions, MCP connections, language
                servers), when the caller keeps them beyond this session (``aclose`` leaves
                them open); None: its own, closed by ``aclose``.
        """
        self.session_id = session_id
        self.task = task
        self.settings = settings or SessionSettings()
        self.last: SessionOutcome | None = last
        self.stopped_in = stopped_in
        """The movement the last run ended in (a resume after a wait goes on there)."""
        self._restored = history is not None
        """Rebuilt from a transcript and not run since: in-process state (browsers) is gone."""
        loop = self.settings.loop
        named = (
            task_files(root, task, open_document, by_code_name=loop.edit == "text")
            if loop.prime
            else []
        )
        gate = permissions or PermissionGate(
            editor,
            store=None,
            gated=self.settings.gated_tools,
            timeout_s=self.settings.permission_timeout_s,
        )
        self.rt = Runtime(
            session_id=session_id,
            root=root,
            workflow=workflow or default_workflow(),
            provider=provider,
            editor=editor,
            tools=offer_intel(root, editor, intel, tools or default_tools()),
            settings=self.settings,
            recorder=recorder,
            permissions=gate,
            messages=list(history) if history is not None else [],
            context=ContextManager(ContextLimits(context_size=self.settings.context_size)),
            task_files=named,
            intel=intel,
            command_watch=command_watch,
            resources=resources if resources is not None else SessionResources(),
        )
        self._owns_resources = resources is None
        self._running = last is None and history is None
        """A run is under way (or a new session's first run is about to start): ``steer``
        takes the person's messages into it."""
        self._seen: dict[str, str] = {}
        """The files the model knew whole when the last run ended (``FilesSeen``)."""
        self._rules: RulesLoaded | None = None
        """Published when the first run starts: which rule files the prompt holds."""
        if history is None:
            template = self.settings.system_prompt or default_template(loop)
            rules = project_rules(root, self.settings.context_size) if loop.rules else None
            found = rules or ProjectRules()
            extra = "\n\n".join(t for t in (intel_rule(loop, self.rt.tools), found.text) if t)
            opening = opening_messages(
                root, task, template, loop, editor, named, rules=extra, shown=self.rt.shown
            )
            for message in opening:
                self.rt.append(message)
            if rules is not None and rules.files:  # nothing to say when none was found
                self._rules = RulesLoaded(files=rules.files, truncated=rules.truncated)

    @property
    def messages(self) -> list[Message]:
        """The live conversation."""
        return self.rt.messages

    @property
    def steps(self) -> int:
        """Model requests made so far."""
        return self.rt.steps

    @property
    def root(self) -> Path:
        """The workspace root."""
        return self.rt.root

    @property
    def workflow(self) -> Workflow:
        """The workflow the next run follows."""
        return self.rt.workflow

    def set_workflow(self, workflow: Workflow) -> None:
        """Follow ``workflow`` from the next run on (a mode or workflow change between turns)."""
        self.rt.workflow = workflow

    def set_provider(self, provider: Provider) -> None:
        """Ask ``provider`` from the next request on (a model change between turns)."""
        self.rt.provider = provider

    def restore_steps(self, steps: int) -> None:
        """Carry the step count of a session rebuilt from its transcript."""
        self.rt.steps = steps

    def restore_tests(self, allowed: str, declined: str) -> None:
        """Carry the person's answers about the test runs of a session rebuilt from its transcript.

        They hold for the session (``engine.project_tests.answered_tests``).
        """
        self.rt.tests_allowed, self.rt.tests_declined = allowed, declined

    def restore_call_ids(self, call_ids: Iterable[str]) -> None:
        """Carry the tool-call ids a session rebuilt from its transcript used.

        Its history holds the model's calls, not the engine's own (a done check's test run:
        ``check-tests``); a call of a later turn must not take one of those ids again, or a
        client would show two calls as one.
        """
        self.rt.call_ids.note(call_ids)

    def restore_seen(self, files: Mapping[str, str]) -> None:
        """Count as seen the files an earlier turn showed whole whose text is still the same.

        ``files``: the last run's ``FilesSeen`` (name → digest of the text it knew). A file
        changed since (the person edited it) is not known any more: a whole-file write of it
        shows it first, as for a file never shown.
        """
        self._seen = dict(files)
        self.rt.shown.clear()
        self.rt.shown.update(still_seen(self.rt.root, self.rt.editor, files))

    def context_usage(self) -> tuple[int, int]:
        """Tokens the conversation holds now and the model's context size."""
        context = self.rt.context
        return context.tokens(self.rt.messages), context.limits.context_size

    @property
    def tool_names(self) -> list[str]:
        """The names of the session's tools."""
        return list(self.rt.tools.names)

    def add_tools(self, tools: Sequence[Tool[Any]], *, gated: Iterable[str] = ()) -> None:
        """Offer ``tools`` from the next request on; those named in ``gated`` ask first."""
        rt = self.rt
        rt.tools = rt.tools.with_tools(tools)
        rt.permissions.gated = rt.permissions.gated | frozenset(gated)

    @property
    def resources(self) -> SessionResources:
        """What the session's tools hold (browser sessions, MCP connections), closed at the end."""
        return self.rt.resources

    async def run(self) -> SessionOutcome:
        """Run the workflow until it ends, waits, the step bound, a cancel, or an error.

        Starts with the first movement, or (after ``resume``) the movement it stopped in.
        Each run has ``max_steps`` model requests. Publishes ``SessionFinished`` last in every
        case, cancellation included (then it re-raises the cancellation, after closing any
        unanswered tool call).
        """
        self.rt.run_start = self.rt.steps
        gate = self.rt.permissions
        self.rt.clock = RunClock(budget_s=self.settings.time_budget_s, waited=lambda: gate.waited_s)
        if self._rules is not None:
            self.rt.publish(self._rules)
            self._rules = None
        self._running = True
        try:
            outcome = await self._run_workflow()
        except ProviderError as exc:
            outcome = self._outcome("error", str(exc))
        except anyio.get_cancelled_exc_class():
            self.rt.messages[:] = sanitize_history(self.rt.messages)
            self._stop_steering()
            self.end_cancelled()
            raise
        except Exception as exc:
            log.exception("session %s failed", self.session_id)
            outcome = self._outcome("error", f"internal error: {type(exc).__name__}: {exc}")
        self._stop_steering()
        self.last = outcome
        self._publish_seen()
        self.rt.publish(SessionFinished.of(outcome))
        return outcome

    def _publish_seen(self) -> None:
        """Record the files the model knows whole as the run ends (the next turn's start)."""
        self._seen = seen_files(self.rt.root, self.rt.shown)
        if self._seen:
            self.rt.publish(FilesSeen(files=self._seen))

    def steer(self, text: str) -> bool:
        """Send ``text`` into the running turn: a user message at its next step boundary.

        The turn does not end while it waits (``engine.loop``). Returns False when no run is
        under way (the session waits for the person, or its turn ended): nothing was taken.
        """
        if not self._running:
            return False
        self.rt.steers.append(text)
        return True

    def _stop_steering(self) -> None:
        """The run is over: a message that came too late for it stays in the conversation."""
        self._running = False
        self.rt.take_steers()

    async def resume(self, reply: str) -> SessionOutcome:
        """Go on after the last run with the person's ``reply``, in the same conversation.

        After ``needs_user_input`` the reply is the answer; after ``waiting_human`` it is what
        the person did (may be empty); after any other end it is a follow-up request. It is
        appended as a user message (tag ``answer``), then ``run`` continues in the movement
        the session stopped in (a follow-up after a final end starts the workflow again).
        """
        last = self.last
        after: StopReason = last.stop_reason if last is not None else "end_turn"
        text = resume_message(last, reply, restored=self._restored) if last is not None else reply
        self._restored = False
        self.rt.publish(SessionResumed(after=after, reply=reply))
        self.rt.append(UserMessage(tag="answer", content=text))
        # The person may have changed files or pages meanwhile: repeating a call is no
        # longer "stuck", and cached reads may be stale.
        self.rt.stuck.workspace_changed()
        self.rt.cache = ReadCache()
        self.restore_seen(self._seen)  # a file the person changed is not known any more
        return await self.run()

    def end_cancelled(self) -> None:
        """Publish ``session_end`` (cancelled): the session was cancelled outside a step."""
        self.last = self._outcome("cancelled", "")
        self.rt.publish(SessionFinished.of(self.last))

    def end_before_start(self) -> None:
        """Publish ``session_end`` (cancelled) for a session cancelled before ``run``."""
        self.end_cancelled()

    async def aclose(self) -> None:
        """Release what the session's tools hold (browser sessions), unless the caller keeps it."""
        if self._owns_resources:
            await self.rt.resources.aclose()

    def _outcome(self, reason: StopReason, message: str) -> SessionOutcome:
        return SessionOutcome(stop_reason=reason, message=message, steps=self.rt.steps)

    def _first_movement(self) -> Movement:
        """Where a run starts: the movement a waiting session stopped in, else the first."""
        workflow = self.rt.workflow
        last = self.last
        if last is not None and last.waiting and self.stopped_in is not None:
            found = workflow.movement(self.stopped_in)
            if found is not None:
                return found
        return workflow.movements[0]

    async def _run_workflow(self) -> SessionOutcome:
        workflow = self.rt.workflow
        movement: Movement = self._first_movement()
        resumed = self.last is not None and self.last.waiting
        reason = ""
        for index in range(1, 10_000):
            self.rt.publish(
                MovementStarted(
                    workflow=workflow.name, movement=movement.name, index=index, reason=reason
                )
            )
            if len(workflow.movements) > 1 and not (resumed and index == 1):
                prompt = movement.prompt(self.settings.loop, self.rt.tools.names)
                self.rt.append(UserMessage(tag="movement", content=prompt))
            runner = MovementRunner(self.rt, movement)
            result = await runner.run()
            self._checkpoint(runner, result)
            if isinstance(result, BudgetSpent):
                return self._outcome("max_steps", self._spent(result))
            if not isinstance(result, NextMovement):
                return self._final(result, movement)
            # The live path uses the replay sanitizer between movements: nothing dangles.
            self.rt.messages[:] = sanitize_history(self.rt.messages)
            following = workflow.movement(result.movement)
            assert following is not None  # control.decide and Workflow validation ensure it
            movement, reason = following, result.reason
        raise RuntimeError("workflow did not end")  # unreachable: the step budget ends it

    def _spent(self, result: BudgetSpent) -> str:
        """The end message of a run whose budget ran out: which one, and what was reached."""
        steps = self.rt.steps - self.rt.run_start
        plural = "" if steps == 1 else "s"
        if result.spent == "steps":
            return f"stopped after {steps} step{plural} without finishing"
        budget = duration(self.settings.time_budget_s or 0.0)
        reached = [f"stopped at the time budget ({budget}) after {steps} step{plural}"]
        changed = ", ".join(dict.fromkeys(self.rt.changed))
        reached.append(f"changed {changed}" if changed else "nothing changed")
        if self.rt.tests_verdict:
            when = "after the last change" if changed else "before any change"
            reached.append(f"the tests {when}: {self.rt.tests_verdict}")
        return "; ".join(reached) + "; not finished"

    def _final(self, result: Ended, movement: Movement) -> SessionOutcome:
        """The session's outcome: under the text format, its message without the blocks."""
        self.stopped_in = movement.name
        update: dict[str, object] = {"steps": self.rt.steps}
        if self.settings.loop.edit == "text":  # the person reads the words, not the edits
            update["message"] = person_text(result.outcome.message)
        return result.outcome.model_copy(update=update)

    def _checkpoint(self, runner: MovementRunner, result: MovementResult | BudgetSpent) -> None:
        """Write the movement's memory checkpoint: what was done, how it ended, what is next."""
        done = (
            f"edited {', '.join(dict.fromkeys(runner.pipeline.edited))}"
            if runner.pipeline.edited
            else f"{runner.pipeline.calls} tool calls, no edits"
        )
        following = result.movement if isinstance(result, NextMovement) else "end of the task"
        note = (
            f"Checkpoint after movement {runner.movement.name!r} ({runner.steps} steps): "
            f"{done}. Result: {_ending(result)}. Next: {following}."
        )
        if self.rt.recorder is not None:
            self.rt.recorder.on_checkpoint(runner.movement.name, note)
        self.rt.publish(CheckpointWritten(movement=runner.movement.name, note=note))
        if isinstance(result, NextMovement):
            self.rt.append(UserMessage(tag="checkpoint", content=note))


def _ending(result: MovementResult | BudgetSpent) -> str:
    """How a movement ended, as its checkpoint says it (the message bounded and redacted)."""
    if isinstance(result, BudgetSpent):
        bound = "step bound" if result.spent == "steps" else "time budget"
        return f"the session's {bound} ran out"
    if isinstance(result, NextMovement):
        return f"{result.kind}: {redact_then_cut(result.reason, 300, '')}"
    end = result.outcome
    return f"{end.stop_reason}: {redact_then_cut(end.message, 300, '')}"
