"""The agent loop: one movement's steps, from the first model request to its result.

Each step, top to bottom in ``MovementRunner``:

1. bounds: the run's step and time budgets, then the movement's ``max_steps``;
2. context pressure: compact above the soft limit; above the hard limit the one overflow
   policy ends the movement (``results.overflow_exit``);
3. the model request (``engine.request.ask_model``): streamed, a cut reply repaired once, the
   reply appended to the history with call ids unique in the session; a request still running
   when the run's time budget is spent is stopped, and the run ends (``BudgetSpent``); after
   failed tests, under ``LoopSettings.candidates``, several replies tried on copies and the
   best one kept (``engine.candidates``);
4. ``resolve_step``: a reply with tool calls runs them, one without ends the turn (its
   structure alone, never its text);
5. the batch, in call order: control calls (``transition``, ``complete``) answered by the
   engine, workspace calls through the call pipeline (``engine.pipeline``); the first call
   that ends the movement (a control call, a person to wait for, a call repeated too often)
   leaves the later calls not run; one tool message per call is recorded, even on cancel;
6. a claim of done (``complete(done)``, a final answer, a ``COMPLETE`` default) goes through
   the done gate and the done checks (``engine.checks``) before it ends anything;
7. a step that changed files and goes on runs the tests (``engine.test_feedback``, under
   ``LoopSettings.test_feedback``): their verdict is a user message after its results; when
   the step's calls were all successful file changes and every test passes, that is the
   claim of done (the done checks still judge it), not one more request.

What the person sends into the running turn (``Session.steer``) becomes a user message at
the next step boundary; while one waits the turn does not end (a final answer or a
``complete`` goes back to the model, which reads the message first). ``update_plan``
(``engine.plan``, under ``LoopSettings.plan``) is answered here too and never ends anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import anyio

from cadenza.engine.candidates import Candidates
from cadenza.engine.checks import DoneChecks, Fail, Refuse, refusal_text
from cadenza.engine.context import bound_result
from cadenza.engine.control import COMPLETE, CONTROL_TOOLS, ControlDecision, control_specs, decide
from cadenza.engine.events import ContextCompacted, StepStarted, ToolCallFinished, ToolCallStarted
from cadenza.engine.gate import claimed_status
from cadenza.engine.gate import refusal as gate_refusal
from cadenza.engine.pipeline import CallPipeline
from cadenza.engine.plan import UPDATE_PLAN, decide_plan, plan_spec
from cadenza.engine.request import ask_model
from cadenza.engine.results import Ended, MovementResult, ended, follow_default, overflow_exit
from cadenza.engine.runtime import Runtime
from cadenza.engine.test_feedback import feedback_after_change, feedback_at_start
from cadenza.engine.variants import ALL_EDIT_TOOLS, finish_hint
from cadenza.engine.workflows import Movement
from cadenza.messages import AssistantReply, FinishReason, ToolCall, UserMessage
from cadenza.schema.outcome import SessionOutcome
from cadenza.tools.base import ToolResult
from cadenza.tools.dispatch.recording import BatchRecorder

FILE_WRITES = ALL_EDIT_TOOLS | {"create_file"}
AFTER_CONTROL = "the movement already ended with an earlier control call in this reply"
AFTER_STUCK = "the movement stopped at an earlier call of this reply, repeated too often"
CANCELLED = "the session was cancelled (a call that was running was stopped)"
STEERED = (
    "not accepted yet: the person sent a message while you worked (it follows this result); "
    "read it, then go on, or call complete again"
)

STEERED_SUMMARY = "not accepted yet: your message came first"
GATED_SUMMARY = "not accepted yet: the change before it failed"
CHECKS_SUMMARY = "not accepted yet: a done check failed"
"""What the person reads of a refused ``complete`` (the model reads what to do next)."""
NOTE = "\n\n"
"""Between a claim's summary and what the checks say did not confirm it (the end message)."""


@dataclass(frozen=True, kw_only=True)
class RunTools:
    """Run these calls, then ask the model again."""

    tool_calls: list[ToolCall]
    cut: FinishReason | None
    """The finish reason of a cut reply (the token limit, or stopped for repeating itself):
    its arguments may be incomplete. None: the reply was whole."""


@dataclass(frozen=True, kw_only=True)
class FinishTurn:
    """The model ended its turn; ``content`` is its final answer."""

    content: str


NextStep = RunTools | FinishTurn


def resolve_step(reply: AssistantReply) -> NextStep:
    """Decide what follows a model reply, from its structure alone.

    A turn continues if and only if the reply carries tool calls; assistant prose never drives
    control flow: there is no test on the text here, or anywhere.
    """
    if reply.tool_calls:
        cut = reply.finish_reason if reply.cut else None
        return RunTools(tool_calls=list(reply.tool_calls), cut=cut)
    return FinishTurn(content=reply.content)


@dataclass(frozen=True, kw_only=True)
class BudgetSpent:
    """The run's own bound ran out (stop reason ``max_steps``): its steps, or its time.

    ``spent``: ``steps`` (``SessionSettings.max_steps``) or ``time`` (``time_budget_s``: no
    step starts after it, and a model request still running is stopped).
    """

    kind: Literal["budget"] = "budget"
    spent: Literal["steps", "time"] = "steps"


class MovementRunner:
    """Runs one movement of a workflow on the shared runtime."""

    def __init__(self, runtime: Runtime, movement: Movement) -> None:
        self.rt = runtime
        self.movement = movement
        self.steps = 0
        self.loop = runtime.settings.loop
        allowed = self.loop.movement_tools(movement.tools, runtime.tools.names)
        self.pipeline = CallPipeline(runtime, movement, allowed)
        self._specs = [s for s in runtime.tools.specs() if s.name in allowed]
        self._specs += control_specs(runtime.workflow)
        if self.loop.plan:
            self._specs.append(plan_spec())
        self._gated: tuple[str, int] | None = None
        """The done gate's refusal and its step, once it refused (once per movement run)."""
        self._last_workspace: tuple[str, ToolResult] | None = None
        """The last workspace call of this run and its result (a new run starts afresh: a
        resume, the next movement)."""
        edit_tool = next((n for n in allowed if n in ALL_EDIT_TOOLS), "")
        self.checks = DoneChecks(runtime, edit_tool, self.pipeline.ctx)
        self.candidates = Candidates(runtime, self.pipeline.ctx, frozenset(allowed))
        self._edits_only = False
        """The last batch held only file changes, each of which succeeded."""
        self._refused: tuple[int, str] = (0, "")
        """The step whose claim of done the checks refused, and the refusal: a later claim in
        the same reply gets the same answer without spending another refusal."""

    async def run(self) -> MovementResult | BudgetSpent:
        """Step until the movement ends, its step bound, or the session's budget."""
        limit = self.movement.max_steps
        if self.loop.test_feedback and self.rt.steps == self.rt.run_start:
            note = await feedback_at_start(self.rt, self.pipeline.ctx)
            if note is not None:
                self.rt.append(UserMessage(tag="check", content=note))
        while True:
            if self.rt.steps - self.rt.run_start >= self.rt.settings.max_steps:
                return BudgetSpent()
            if self.rt.clock.spent:
                return BudgetSpent(spent="time")
            if limit is not None and self.steps >= limit:
                bounded = follow_default(
                    self.movement,
                    f"movement {self.movement.name!r} reached its step bound ({limit})",
                )
                checked = await self._check_done(bounded, can_refuse=False)
                assert not isinstance(checked, str)  # nothing is refused without a next step
                return checked
            self.rt.take_steers()
            overflow = self._relieve_pressure()
            if overflow is not None:
                return overflow
            result = await self._step()
            if result is not None and not self._steered(result):
                return result

    def _steered(self, result: MovementResult | BudgetSpent) -> bool:
        """True when the turn would end while the person's message waits: it goes on."""
        ends = isinstance(result, Ended) and result.outcome.stop_reason in ("end_turn", "failed")
        return ends and bool(self.rt.steers)

    def _relieve_pressure(self) -> MovementResult | None:
        """Compact above the soft limit; above the hard limit, the one overflow policy."""
        ctx, messages = self.rt.context, list(self.rt.messages)  # a copy: counted after
        if ctx.pressure(messages) == "ok":
            return None
        before = ctx.tokens(messages)
        compacted = ctx.compact(messages)
        if compacted is not messages:
            self.rt.messages[:] = compacted
            self.rt.publish(
                ContextCompacted(
                    tokens_before=before,
                    tokens_after=ctx.tokens(compacted),
                    messages_summarized=len(messages) - len(compacted) + 1,
                )
            )
        if ctx.pressure(self.rt.messages) == "hard":
            return overflow_exit(
                self.movement,
                f"{ctx.tokens(self.rt.messages)} tokens in history "
                f"over the hard limit of {ctx.limits.hard}",
            )
        return None

    async def _step(self) -> MovementResult | BudgetSpent | None:
        self.rt.steps += 1
        self.steps += 1
        clock = self.rt.clock
        self.rt.publish(
            StepStarted(
                step=self.rt.steps,
                max_steps=self.rt.settings.max_steps,
                run_step=self.rt.steps - self.rt.run_start,
                elapsed_s=round(clock.elapsed_s, 1),
                budget_s=clock.budget_s,
            )
        )
        changed = len(self.rt.changed)
        pick = self.candidates.pick if self.candidates.ready() else None
        with anyio.move_on_after(clock.left_s) as request:  # stopped when the time is spent
            reply = await ask_model(self.rt, list(self._specs), pick)
        if request.cancelled_caught:  # the reply was stopped before it entered the history
            return BudgetSpent(spent="time")
        step = resolve_step(reply)
        result: MovementResult | None
        if isinstance(step, FinishTurn):
            finished = follow_default(self.movement, "the model ended its turn", step.content)
            checked = await self._check_done(finished)
            if not isinstance(checked, str):
                return checked
            self.rt.append(UserMessage(tag="check", content=checked))  # no call to answer
            result = None
        else:
            result = await self._run_batch(step)
        if result is None and self.loop.test_feedback and len(self.rt.changed) > changed:
            note = await feedback_after_change(self.rt, self.pipeline.ctx)
            if note is not None:
                self.rt.append(UserMessage(tag="check", content=note))
                result = await self._green(step, reply.content)
        return result

    async def _green(self, step: NextStep, prose: str) -> MovementResult | None:
        """A reply that only changed files, after which every test passes, ends the turn.

        The tests are the judge: asking the model once more only to hear "done" costs a
        whole request. A reply that also read, searched or ran something still needs what it
        asked for, and a failed edit still needs its error read, so those go on. The claim
        goes through the done checks like any other.
        """
        ran = self.rt.tests_last
        if (
            not isinstance(step, RunTools)
            or step.cut is not None
            or not self._edits_only
            or ran is None
            or ran.status != "passed"
        ):
            return None
        verdict = f"The tests pass: {self.rt.tests_verdict}." if self.rt.tests_verdict else ""
        summary = f"{prose.strip()}\n\n{verdict}".strip() or "The tests pass."
        finished = follow_default(self.movement, "the tests pass after the change", summary)
        checked = await self._check_done(finished)
        return None if isinstance(checked, str) else checked

    async def _run_batch(self, step: RunTools) -> MovementResult | None:
        """Run every call in order; record one tool message per call, even on cancel."""
        recorder = BatchRecorder(step.tool_calls)
        decided: MovementResult | None = None
        self._edits_only = True
        try:
            for call in step.tool_calls:
                if decided is not None:
                    why = AFTER_STUCK if decided is self.pipeline.stuck_stop else AFTER_CONTROL
                    result = ToolResult(content=f"not run: {why}", is_error=True)
                elif call.name in CONTROL_TOOLS:
                    self._edits_only = False
                    result, decided = await self._control(call)
                elif call.name == UPDATE_PLAN and self.loop.plan:
                    result = self._plan(call)
                else:
                    result = await self.pipeline.run(call, cut=step.cut)
                    self._last_workspace = (call.name, result)
                    if call.name not in FILE_WRITES or result.is_error:
                        self._edits_only = False
                    decided = self._after_workspace(result)
                bounded = bound_result(result.content, self.rt.context.limits.result_chars)
                kept = ToolResult(
                    content=bounded, is_error=result.is_error, unchanged=result.unchanged
                )
                recorder.add(call.id, kept)
        finally:
            for message in recorder.messages(not_run_reason=CANCELLED):
                self.rt.append(message)
        return decided

    def _after_workspace(self, result: ToolResult) -> MovementResult | None:
        """The movement's end after a workspace call: stuck, or a person must act, or None."""
        if self.pipeline.stuck_stop is not None:
            return self.pipeline.stuck_stop
        wait = result.waiting_human
        if wait is None:
            return None
        # A person must act: later calls of the batch are not run.
        waiting = SessionOutcome(
            stop_reason="waiting_human",
            message=wait.wait_reason,
            browser_session_id=wait.browser_session_id,
            url=wait.url,
            act_url=wait.act_url,
        )
        return Ended(outcome=waiting)

    async def _control(self, call: ToolCall) -> tuple[ToolResult, MovementResult | None]:
        self.rt.publish(
            ToolCallStarted(
                tool_call_id=call.id,
                name=call.name,
                title=call.name,
                tool_kind="think",
                raw_input=call.arguments,
            )
        )
        decision = decide(call, self.rt.workflow)
        gated = self._gate(call) if decision.result is not None else None
        summary = ""  # the person's words when the model's say what to do next
        if gated is not None:
            decision = ControlDecision(content=gated, result=None)
            summary = STEERED_SUMMARY if gated == STEERED else GATED_SUMMARY
        elif decision.result is not None:
            checked = await self._check_done(decision.result)
            if isinstance(checked, str):
                decision = ControlDecision(content=checked, result=None)
                summary = CHECKS_SUMMARY
            elif isinstance(checked, Ended) and checked is not decision.result:
                said = checked.outcome.message
                content = f"complete(done) not accepted; the task ends as failed. {said}"
                summary = "not accepted: the task ends as not done"
                if checked.outcome.stop_reason != "failed":  # accepted, the tests unconfirmed
                    content, summary = f"{decision.content}. {said.rpartition(NOTE)[2]}", ""
                decision = ControlDecision(content=content, result=checked)
        self.rt.publish(
            ToolCallFinished(
                tool_call_id=call.id,
                content=decision.content,
                status="failed" if decision.is_error else "completed",
                summary=summary,
            )
        )
        return ToolResult(content=decision.content, is_error=decision.is_error), decision.result

    def _plan(self, call: ToolCall) -> ToolResult:
        """Answer ``update_plan``: a valid list goes to the editor; nothing ends."""
        content, plan = decide_plan(call)
        if plan is not None:
            self.rt.publish(plan)
        return ToolResult(content=content, is_error=plan is None)

    async def _check_done(
        self, result: MovementResult, *, can_refuse: bool = True
    ) -> MovementResult | str:
        """``result`` unless it claims done and the done checks do not accept that.

        Returns:
            ``result``; or the refusal the model reads (the claim goes back to it); or, when
            the checks refused too often (or cannot refuse), a ``failed`` completion.
        """
        if not isinstance(result, Ended) or not result.claims_done:
            return result
        if can_refuse and self._refused[0] == self.rt.steps:
            return self._refused[1]
        verdict = await self.checks.judge(can_refuse=can_refuse)
        if isinstance(verdict, Refuse):
            text = refusal_text(verdict.failures, finish_hint(self.loop.ending))
            self._refused = (self.rt.steps, text)
            return text
        if isinstance(verdict, Fail):
            return ended("failed", verdict.summary)
        if verdict.unchecked:  # the person's end message never lets that pass for tested
            message = f"{result.outcome.message}{NOTE}{verdict.unchecked}".strip()
            return Ended(outcome=result.outcome.model_copy(update={"message": message}))
        return result

    def _gate(self, call: ToolCall) -> str | None:
        """Once per movement run: refuse ``complete(done)`` right after a failed call.

        "Right after": the last workspace call of this run (this reply's earlier calls
        included) failed, not with a settled error nor because the person declined it (that
        change is not to be made again). Later ``complete`` calls of the reply that
        was refused are refused too, so one reply cannot slip past the gate.

        Returns:
            The refusal the model reads, or None when the call goes on to the checks. A
            ``complete`` while the person's message waits is refused each time (``STEERED``).
        """
        if call.name == COMPLETE and self.rt.steers:
            return STEERED
        if not self.loop.done_gate or call.name != COMPLETE or claimed_status(call) != "done":
            return None
        if self._gated is not None:
            text, step = self._gated
            return text if step == self.rt.steps else None
        last = self._last_workspace
        if last is None or not last[1].is_error or last[1].settled or last[1].declined:
            return None
        self._gated = (gate_refusal(last[0], last[1].content), self.rt.steps)
        return self._gated[0]
