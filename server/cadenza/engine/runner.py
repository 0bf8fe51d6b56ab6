"""One movement's step loop: ask the model, run its calls, until a ``MovementResult``.

Each step: check context pressure (compact, or the one overflow policy), request, resolve the
reply structurally, then run the batch through the dispatcher (control calls answered by the
engine, workspace calls through cache routing and execution), recording one tool message per
call in call order before anything else happens.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from cadenza.engine.after_edit import edit_notes
from cadenza.engine.context import bound_result
from cadenza.engine.control import COMPLETE, CONTROL_TOOLS, ControlDecision, control_specs, decide
from cadenza.engine.events import (
    AgentMessageChunk,
    ContextCompacted,
    ContractRepaired,
    FileEdited,
    ModelReplied,
    Observation,
    PermissionDecided,
    StepStarted,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
)
from cadenza.engine.gate import claims_done
from cadenza.engine.gate import refusal as gate_refusal
from cadenza.engine.loop import EDIT_TOOLS
from cadenza.engine.permissions import PermissionRequest, refusal
from cadenza.engine.results import (
    Completed,
    MovementResult,
    WaitingHuman,
    follow_default,
    overflow_exit,
)
from cadenza.engine.runtime import Runtime
from cadenza.engine.steps import FinishTurn, RunTools, resolve_step
from cadenza.engine.stuck import Repeat, repeat_note
from cadenza.engine.workflows import Movement
from cadenza.messages import AssistantReply, ToolCall, ToolMessage, ToolSpec, UserMessage
from cadenza.providers.base import ModelRequest, ToolChoice
from cadenza.tools.base import ToolContext, ToolError, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.dispatch.recording import BatchRecorder
from cadenza.tools.documents import fingerprint
from cadenza.tools.paths import relative_name, resolve_in_workspace

CUT_ARGUMENTS = (
    "your reply was cut by the token limit before this call's arguments were complete; the "
    "call was not run and nothing was written. Make the call again with shorter arguments "
    "(for example a smaller edit)."
)
AFTER_CONTROL = "the movement already ended with an earlier control call in this reply"
AFTER_STUCK = "the movement stopped at an earlier call of this reply, repeated too often"
REPAIR_CUT = (
    "Your last reply was cut by the token limit before it was complete, so it was dropped. "
    "Reply again with one complete call, with shorter arguments (a smaller edit)."
)


@dataclass(frozen=True, kw_only=True)
class BudgetSpent:
    """The session's own step bound ran out (stop reason ``max_steps``)."""

    kind: Literal["budget"] = "budget"


class _StreamSink:
    """Forwards streamed text as ``agent_message_chunk`` and remembers that it did."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.used = False

    def __call__(self, delta: str) -> None:
        self.used = True
        self.runtime.publish(AgentMessageChunk(text=delta))


class MovementRunner:
    """Runs one movement of a workflow on the shared runtime."""

    def __init__(self, runtime: Runtime, movement: Movement) -> None:
        self.rt = runtime
        self.movement = movement
        self.steps = 0
        self.edited: list[str] = []
        self.calls = 0
        self.loop = runtime.settings.loop
        self.allowed = self.loop.movement_tools(movement.tools, runtime.tools.names)
        self._specs: list[ToolSpec] | None = None
        self._stuck_stop: MovementResult | None = None
        self._gated = ""
        """The done gate's refusal, once it refused (it refuses once per movement run)."""
        self._gated_step = 0
        self._last_workspace: tuple[str, ToolResult] | None = None
        """The last workspace call of this run and its result (a new run starts afresh: a
        resume, the next movement)."""
        self._ctx = ToolContext(
            root=runtime.root,
            host=runtime.editor,
            session_id=runtime.session_id,
            resources=runtime.resources,
            line_numbers=self.loop.edit == "line_range",
            syntax_guard=self.loop.syntax_guard,
        )

    def tool_specs(self) -> list[ToolSpec]:
        """Workspace tools of this movement, then the control tools (built once a movement)."""
        if self._specs is None:
            specs = [s for s in self.rt.tools.specs() if s.name in self.allowed]
            self._specs = specs + control_specs(self.rt.workflow)
        return list(self._specs)

    async def run(self) -> MovementResult | BudgetSpent:
        """Step until the movement ends, its step bound, or the session's budget."""
        limit = self.movement.max_steps
        while True:
            if self.rt.steps - self.rt.run_start >= self.rt.settings.max_steps:
                return BudgetSpent()
            if limit is not None and self.steps >= limit:
                return follow_default(
                    self.movement,
                    f"movement {self.movement.name!r} reached its step bound ({limit})",
                )
            overflow = self._relieve_pressure()
            if overflow is not None:
                return overflow
            result = await self._step()
            if result is not None:
                return result

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

    def _request(self) -> ModelRequest:
        first = not any(isinstance(m, ToolMessage) for m in self.rt.messages)
        settings = self.rt.settings
        choice: ToolChoice
        if self.loop.ending == "complete":
            choice = "required"  # finishing is itself a call: every reply holds one
        else:
            choice = settings.first_step_tool_choice if first else "auto"
        return ModelRequest(
            messages=list(self.rt.messages),
            tools=self.tool_specs(),
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
            tool_choice=choice,
            ending=self.loop.ending,
        )

    async def _step(self) -> MovementResult | None:
        self.rt.steps += 1
        self.steps += 1
        self.rt.publish(StepStarted(step=self.rt.steps, max_steps=self.rt.settings.max_steps))
        sink = _StreamSink(self.rt)
        request = self._request()
        reply = await self.rt.provider.complete(request, on_text=sink)
        self._replied(reply)
        if self.loop.repair and _is_cut(reply):
            sink = _StreamSink(self.rt)  # the retry's own text is shown too
            reply = await self._repair(request, sink)
        if reply.content and not sink.used:
            self.rt.publish(AgentMessageChunk(text=reply.content))
        self.rt.append(reply.to_message())
        self.rt.context.record_usage(reply.usage, covered=len(self.rt.messages))
        step = resolve_step(reply)
        if isinstance(step, FinishTurn):
            return follow_default(self.movement, "the model ended its turn", summary=step.content)
        return await self._run_batch(step)

    def _replied(self, reply: AssistantReply) -> None:
        usage = reply.usage
        self.rt.publish(
            ModelReplied(
                step=self.rt.steps,
                tool_calls=len(reply.tool_calls),
                finish_reason=reply.finish_reason,
                prompt_tokens=usage.prompt_tokens if usage is not None else None,
                completion_tokens=usage.completion_tokens if usage is not None else None,
            )
        )

    async def _repair(self, request: ModelRequest, sink: _StreamSink) -> AssistantReply:
        """Exactly-once repair of a cut reply: ask once more, with a note and twice the tokens.

        Twice the tokens when the request set a bound (``local/`` sessions always do). The cut
        reply never enters the history; a second miss goes on as a miss (the call
        is answered with ``CUT_ARGUMENTS``).
        """
        max_tokens = request.max_tokens * 2 if request.max_tokens else None
        retry = ModelRequest(
            messages=[*request.messages, UserMessage(tag="repair", content=REPAIR_CUT)],
            tools=request.tools,
            max_tokens=max_tokens,
            temperature=request.temperature,
            tool_choice="required",
            ending=request.ending,
        )
        reply = await self.rt.provider.complete(retry, on_text=sink)
        self._replied(reply)
        recovered = not _is_cut(reply)
        self.rt.publish(ContractRepaired(step=self.rt.steps, reason="cut", recovered=recovered))
        return reply

    async def _run_batch(self, step: RunTools) -> MovementResult | None:
        """Run every call in order; record one tool message per call, even on cancel."""
        recorder = BatchRecorder(step.tool_calls)
        decided: MovementResult | None = None
        try:
            for call in step.tool_calls:
                if decided is not None:
                    why = AFTER_STUCK if decided is self._stuck_stop else AFTER_CONTROL
                    result = ToolResult(content=f"not run: {why}", is_error=True)
                elif call.name in CONTROL_TOOLS:
                    result, decided = self._control(call)
                else:
                    result = await self._workspace_call(call, cut=step.cut)
                    self._last_workspace = (call.name, result)
                    if self._stuck_stop is not None:
                        decided = self._stuck_stop
                    elif (wait := result.waiting_human) is not None:
                        # A person must act: later calls of the batch are not run.
                        decided = WaitingHuman(
                            wait_reason=wait.wait_reason,
                            browser_session_id=wait.browser_session_id,
                            url=wait.url,
                            act_url=wait.act_url,
                        )
                bounded = bound_result(result.content, self.rt.context.limits.result_chars)
                recorder.add(call.id, ToolResult(content=bounded, is_error=result.is_error))
        finally:
            reason = "the session was cancelled (a call that was running was stopped)"
            for message in recorder.messages(not_run_reason=reason):
                self.rt.append(message)
        return decided

    def _control(self, call: ToolCall) -> tuple[ToolResult, MovementResult | None]:
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
        if decision.result is not None and self._gate_done(call):
            decision = ControlDecision(content=self._gated, result=None)
        self.rt.publish(
            ToolCallFinished(
                tool_call_id=call.id,
                content=decision.content,
                status="failed" if decision.is_error else "completed",
            )
        )
        return ToolResult(content=decision.content, is_error=decision.is_error), decision.result

    def _gate_done(self, call: ToolCall) -> bool:
        """Once per movement run: refuse ``complete(done)`` right after a failed call.

        "Right after": the last workspace call of this run (this reply's earlier calls
        included) failed, not with a settled error. Later ``complete`` calls of the reply that
        was refused are refused too, so one reply cannot slip past the gate.
        """
        if not self.loop.done_gate or call.name != COMPLETE or not claims_done(call):
            return False
        if self._gated:
            return self._gated_step == self.rt.steps
        last = self._last_workspace
        if last is None or not last[1].is_error or last[1].settled:
            return False
        self._gated = gate_refusal(last[0], last[1].content)
        self._gated_step = self.rt.steps
        return True

    async def _workspace_call(self, call: ToolCall, *, cut: bool) -> ToolResult:
        self.calls += 1
        prepared = prepare(call, self.rt.tools)
        title = prepared.title if isinstance(prepared, PreparedCall) else call.name
        kind = prepared.tool.kind if isinstance(prepared, PreparedCall) else "other"
        self.rt.publish(
            ToolCallStarted(
                tool_call_id=call.id,
                name=call.name,
                title=title,
                tool_kind=kind,
                raw_input=call.arguments,
            )
        )
        observed = self._observe(call, prepared, cut)
        if observed is not None:
            answer, observation = observed
            self.rt.publish(
                ToolCallFinished(
                    tool_call_id=call.id,
                    content=answer.content,
                    status="failed",
                    observation=observation,
                )
            )
            return answer
        assert isinstance(prepared, PreparedCall)
        refused = await self._ask_permission(call, prepared)
        if refused is not None:
            result = refused
        else:
            try:
                result = await self._dispatch(call, prepared)
            except BaseException:
                # Cancelled mid-call: the editor still sees the call end (ACP: a final status).
                self.rt.publish(
                    ToolCallFinished(
                        tool_call_id=call.id, content="cancelled while running", status="failed"
                    )
                )
                raise
        self.rt.publish(
            ToolCallFinished(
                tool_call_id=call.id,
                content=result.content,
                status="failed" if result.is_error else "completed",
            )
        )
        return result

    def _observe(
        self, call: ToolCall, prepared: PreparedCall | ToolResult, cut: bool
    ) -> tuple[ToolResult, Observation] | None:
        """Answer a call without running it: cut arguments, invalid call, not allowed, repeat."""
        if cut:
            return ToolResult(content=CUT_ARGUMENTS, is_error=True), "cut"
        if isinstance(prepared, ToolResult):
            self._count_repeat(call, ())  # the same bad call again counts towards the limit
            return prepared, "invalid"
        if call.name not in self.allowed:
            self._count_repeat(call, ())
            available = ", ".join(self.allowed + sorted(CONTROL_TOOLS))
            content = (
                f"{call.name} is not available in movement {self.movement.name!r}; "
                f"available: {available}"
            )
            return ToolResult(is_error=True, content=content), "not_allowed"
        if self.loop.repeats == "run":
            return None
        repeat = self._count_repeat(call, self._fingerprint(prepared))
        if repeat is None:
            return None
        edit_tool = next((t for t in EDIT_TOOLS.get(self.loop.edit, ()) if t in self.allowed), "")
        note = repeat_note(repeat, ending=self.loop.ending, edit_tool=edit_tool or "an edit tool")
        return ToolResult(content=note, is_error=True), "repeat"

    def _count_repeat(self, call: ToolCall, state: tuple[object, ...]) -> Repeat | None:
        """Record ``call`` with the stuck detector; past ``stuck_limit`` repeats, stop."""
        repeat = self.rt.stuck.check(call, self.rt.steps, state)
        limit = self.loop.stuck_limit
        if repeat is not None and limit and repeat.times >= limit:
            self._stuck_stop = _stuck_question(repeat, call)
        return repeat

    async def _ask_permission(self, call: ToolCall, prepared: PreparedCall) -> ToolResult | None:
        """For a gated tool: None when the person allows the call, else the refusal result."""
        gate = self.rt.permissions
        if not gate.needs_asking(call.name):
            return None
        request = PermissionRequest(
            tool_call_id=call.id,
            name=call.name,
            title=prepared.title,
            kind=prepared.tool.kind,
            raw_input=call.arguments,
        )
        verdict, option = await gate.check(request)
        self.rt.publish(
            PermissionDecided(tool_call_id=call.id, name=call.name, verdict=verdict, option=option)
        )
        if verdict == "allowed":
            return None
        return refusal(verdict, call.name, gate.timeout_s)

    def _fingerprint(self, prepared: PreparedCall) -> tuple[object, ...]:
        """The file's fingerprint for a call on one file; folders and searches have none.

        A repeated call on a file that changed since (the person edited it, an edit was
        refused over their unsaved text) is not "stuck": the stuck detector compares these.
        """
        path = getattr(prepared.args, "path", None)
        if not isinstance(path, str) or prepared.tool.name in ("list_files", "search"):
            return ()
        try:
            return fingerprint(self.rt.editor, resolve_in_workspace(self.rt.root, path))
        except ToolError:
            return ()

    async def _dispatch(self, call: ToolCall, prepared: PreparedCall) -> ToolResult:
        """Cache routing, then execution; edits invalidate what they may affect."""
        lookup = self.rt.cache.lookup(prepared)
        current = self._fingerprint(prepared)
        hit = lookup.hit and self.rt.fingerprints.get(lookup.key) == current
        if lookup.outcome != "bypass":
            self.rt.publish(ToolCacheLookup(tool_call_id=call.id, name=call.name, hit=hit))
        if hit and lookup.result is not None:
            return lookup.result
        result = await run(prepared, self._ctx)
        if lookup.outcome != "bypass" and self.rt.cache.store(prepared, result):
            self.rt.fingerprints[lookup.key] = current
        if result.edits:
            self.rt.stuck.workspace_changed()
            self.rt.cache.invalidate_paths([e.path for e in result.edits], self.rt.root)
        echoes: list[str] = []
        for edit in result.edits:
            self.edited.append(relative_name(self.rt.root, edit.path))
            if self.loop.edit_echo and edit.kind == "change":
                echoes.append(edit_notes(self.rt, edit, relative_name(self.rt.root, edit.path)))
            self.rt.publish(
                FileEdited(
                    tool_call_id=call.id,
                    path=relative_name(self.rt.root, edit.path),
                    old_text=edit.old_text,
                    new_text=edit.new_text,
                )
            )
        if echoes:
            return dataclasses.replace(result, content=result.content + "".join(echoes))
        return result


def _is_cut(reply: AssistantReply) -> bool:
    """A reply cut by the token limit in the middle of a call (a contract miss)."""
    return reply.finish_reason == "length" and bool(reply.tool_calls)


def _stuck_question(repeat: Repeat, call: ToolCall) -> Completed:
    """The movement's end after ``repeat.times`` noted repeats: a question, not a spent budget."""
    return Completed(
        status="needs_user_input",
        summary=(
            f"Stopped: the model called {call.name} with the same arguments "
            f"{repeat.times + 1} times although each repeat was answered with a note."
        ),
        missing_info=f"how to go on: the model keeps repeating {call.name}({call.arguments})",
        why_no_default=(
            "the model is in a loop of identical calls; going on would spend the remaining "
            "steps on the same call"
        ),
    )
