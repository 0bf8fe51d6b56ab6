"""The call pipeline: one workspace call from the model to its result.

In order, each step from ``tools.dispatch`` or the engine:

1. preparation (``dispatch.execution.prepare``): the tool exists, the arguments validate;
   the editor learns of the call (``tool_call``) before anything is done on its behalf;
2. observation: a call the engine answers itself, without running it: arguments cut by the
   token limit, a block of a text reply that could not be read as a call, an invalid call, a
   tool the movement does not offer, an identical repeat (the stuck detector; past
   ``stuck_limit`` repeats the movement stops with a question);
3. permission (``engine.permissions``): a call its tool refuses up front (``precheck``: a
   folder outside the workspace) gets that error and is never put to the person; a gated
   tool asks the person first; and while it runs, any change to a protected path asks
   again, every time (``engine.protected``); a call the person did not allow is
   ``declined`` (``Runtime.declined``);
4. cache routing (``dispatch.cache``): a read-only call answered from the cache while the
   file it read is unchanged, else executed;
5. execution (``dispatch.execution.run``): timeouts and failures become error results; the
   files a command changed are recorded by the session's ``command_watch`` (review, undo)
   and published as the call's edits; no other session writes in the workspace while a
   command runs, and an edit waits for another session's command (``workspace_wait``);
6. invalidation: edits drop the cached results they may change and reset the stuck detector
   (a command, or any call that may change files without saying which, drops every cached
   result); each edit is recorded in the session (``after_edit.record_edit``: the done
   checks read it), published (``file_edited``) and, under ``edit_echo``, echoed; the
   first edit under a folder with its own AGENTS.md shows that file (``rules``); the errors
   the edit introduced are appended (``edit_checks``, the diagnostics taken before it ran);
7. the call's end (``tool_call_update``), cancellation included.

Result recording (one tool message per call of a batch, in call order) is the batch's:
``dispatch.recording.BatchRecorder`` in ``engine.loop``.
"""

from __future__ import annotations

import dataclasses

import anyio

from cadenza.engine.after_edit import edit_notes, record_edit
from cadenza.engine.control import CONTROL_TOOLS
from cadenza.engine.edit_checks import EditDiagnostics
from cadenza.engine.events import (
    Observation,
    PermissionDecided,
    ToolCacheLookup,
    ToolCallFinished,
    ToolCallStarted,
    WorkspaceWaited,
    file_edited,
)
from cadenza.engine.permissions import PermissionRequest, refusal
from cadenza.engine.protected import ProtectedWrites, local_fetch_consent
from cadenza.engine.results import Ended, MovementResult, ended
from cadenza.engine.rules import nested_rules
from cadenza.engine.runtime import Runtime
from cadenza.engine.stuck import Repeat, repeat_note
from cadenza.engine.variants import EDIT_TOOLS
from cadenza.engine.workflows import Movement
from cadenza.messages import FinishReason, ToolCall
from cadenza.secrets import redact
from cadenza.tools.base import ToolContext, ToolKind, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, precheck, prepare, run, stamped
from cadenza.tools.paths import relative_name

WATCHED_KINDS: frozenset[ToolKind] = frozenset({"execute", "edit", "delete", "move"})
"""Tool kinds run under the ``command_watch``: commands alone in the workspace, the rest
(the calls that write files) never inside another session's command."""

CUT_ARGUMENTS = (
    "your reply was cut by the token limit before this call's arguments were complete; the "
    "call was not run and nothing was written. Make the call again with shorter arguments "
    "(for example a smaller edit)."
)
REPEATING_ARGUMENTS = (
    "your reply kept repeating the same text, so it was stopped before this call's arguments "
    "were complete; the call was not run and nothing was written. Make the call again, "
    "writing each line once."
)


class CallPipeline:
    """Runs the workspace calls of one movement run.

    Attributes:
        calls: Workspace calls made (for the movement's checkpoint).
        edited: Workspace-relative names of the files edited, in order (repeats kept).
        stuck_stop: The movement's end once a call was repeated past ``stuck_limit``.
        ctx: What the movement's tools run with.
    """

    def __init__(self, runtime: Runtime, movement: Movement, allowed: list[str]) -> None:
        self.rt = runtime
        self.movement = movement
        self.allowed = allowed
        self.loop = runtime.settings.loop
        self.calls = 0
        self.edited: list[str] = []
        self.stuck_stop: MovementResult | None = None
        self._diagnostics = EditDiagnostics(runtime.root, runtime.editor, runtime.intel)
        self.ctx = ToolContext(
            root=runtime.root,
            host=runtime.editor,
            session_id=runtime.session_id,
            resources=runtime.resources,
            line_numbers=self.loop.edit == "line_range",
            fenced=self.loop.edit == "text",
            shown=runtime.shown if self.loop.edit == "text" else None,
            syntax_guard=self.loop.syntax_guard,
            intel=runtime.intel,
            trusted_folder=runtime.settings.trusted_folder,
        )

    async def run(self, call: ToolCall, *, cut: FinishReason | None) -> ToolResult:
        """Take ``call`` through the pipeline; its result (an answer when it did not run).

        ``cut``: the finish reason of a cut reply (``CUT_REASONS``): its calls are answered,
        not run. None: the reply was whole.
        """
        self.calls += 1
        prepared = prepare(call, self.rt.tools)
        self._started(call, prepared)
        if isinstance(prepared, PreparedCall) and not cut:
            prepared = await stamped(prepared, self.ctx)  # once: stuck detector, cache and tool
        observed = self._observe(call, prepared, cut)
        if observed is not None:
            answer, observation = observed
            self._finished(call, answer, observation)
            return answer
        assert isinstance(prepared, PreparedCall)
        asked = self.rt.permissions.needs_asking(call.name)
        result = await precheck(prepared, self.ctx) or await self._ask_permission(call, prepared)
        if result is None:
            if asked:  # the files may have changed while the person decided
                prepared = await stamped(prepared, self.ctx)
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
        if result.declined:
            self.rt.declined.add(call.id)
        self._finished(call, result)
        return result

    def _started(self, call: ToolCall, prepared: PreparedCall | ToolResult) -> None:
        title: str = call.name
        kind: ToolKind = "other"
        if isinstance(prepared, PreparedCall):
            title, kind = prepared.title, prepared.tool.kind
        self.rt.publish(
            ToolCallStarted(
                tool_call_id=call.id,
                name=call.name,
                title=title,
                tool_kind=kind,
                raw_input=call.arguments,
            )
        )

    def _finished(
        self, call: ToolCall, result: ToolResult, observation: Observation | None = None
    ) -> None:
        self.rt.publish(
            ToolCallFinished(
                tool_call_id=call.id,
                content=result.content,
                status="failed" if result.is_error or observation else "completed",
                observation=observation,
                summary=result.summary,
            )
        )

    def _observe(
        self, call: ToolCall, prepared: PreparedCall | ToolResult, cut: FinishReason | None
    ) -> tuple[ToolResult, Observation] | None:
        """Answer a call without running it, or None.

        Cut arguments, a block that could not be read (``ToolCall.error``), an invalid call,
        a tool not allowed, a repeat.
        """
        if cut:
            text = REPEATING_ARGUMENTS if cut == "repetition" else CUT_ARGUMENTS
            said = (
                "kept repeating itself"
                if cut == "repetition"
                else "was cut off at its length limit"
            )
            summary = f"not run: the reply {said} before this call was whole"
            return ToolResult(content=text, is_error=True, summary=summary), "cut"
        if call.error is not None:
            self._count_repeat(call, ())  # the same broken block again counts towards the limit
            return ToolResult(content=call.error, is_error=True), "invalid"
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
            summary = f"not run: {call.name} is not offered in movement {self.movement.name}"
            return ToolResult(is_error=True, content=content, summary=summary), "not_allowed"
        if self.loop.repeats == "run":
            return None
        repeat = self._count_repeat(call, self._fingerprint(prepared))
        if repeat is None:
            return None
        edit_tool = next((t for t in EDIT_TOOLS.get(self.loop.edit, ()) if t in self.allowed), "")
        note = repeat_note(repeat, ending=self.loop.ending, edit_tool=edit_tool or "an edit tool")
        summary = (
            f"not run again: the same call as at step {repeat.first_step}, nothing changed since"
        )
        return ToolResult(content=note, is_error=True, summary=summary), "repeat"

    def _count_repeat(self, call: ToolCall, state: tuple[object, ...]) -> Repeat | None:
        """Record ``call`` with the stuck detector; past ``stuck_limit`` repeats, stop."""
        repeat = self.rt.stuck.check(call, self.rt.steps, state)
        limit = self.loop.stuck_limit
        if repeat is not None and limit and repeat.times >= limit:
            self.stuck_stop = _stuck_question(repeat, call)
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
        rule = gate.refusing_rule(call) if option == "remembered" else ""
        return refusal(verdict, call.name, gate.timeout_s, rule)

    def _fingerprint(self, prepared: PreparedCall) -> tuple[object, ...]:
        """What the call reads, as it is now (its stamp); calls that read nothing: ``()``.

        A repeated call on a file, folder or search whose answer may differ since (the person
        edited it, a command created a file, another process wrote it) is not "stuck": the
        stuck detector compares these. Nor is an edit after the conversation was shown more
        files: a whole-file write refused as unseen shows the file, and the same write then
        succeeds.
        """
        stamp = prepared.stamp
        state: tuple[object, ...] = () if stamp is None else (stamp.state,)
        if prepared.tool.kind == "edit" and self.ctx.shown is not None:
            state += (len(self.ctx.shown),)
        return state

    async def _dispatch(self, call: ToolCall, prepared: PreparedCall) -> ToolResult:
        """Cache routing, then execution, then invalidation after edits."""
        # The cache checks each entry's stamp itself: a changed file, buffer or folder misses.
        lookup = self.rt.cache.lookup(prepared)
        hit = lookup.hit
        if lookup.outcome != "bypass":
            self.rt.publish(ToolCacheLookup(tool_call_id=call.id, name=call.name, hit=hit))
        if hit and lookup.result is not None:
            return lookup.result
        checking = self.loop.edit_diagnostics and prepared.tool.kind == "edit"
        before = (
            await self._diagnostics.before(getattr(prepared.args, "path", None)) if checking else {}
        )
        result = await self._run(call, prepared)
        if lookup.outcome != "bypass":
            self.rt.cache.store(prepared, result)
        result = await self._invalidate(call, prepared, result)
        if checking and result.edits:
            note = await self._diagnostics.note(result.edits, before)
            if note:
                result = dataclasses.replace(result, content=result.content + note)
        return result

    async def _run(self, call: ToolCall, prepared: PreparedCall) -> ToolResult:
        """Execute the call; a command, or an edit, under the session's ``command_watch``.

        The tool's host asks before any change to a protected path, and ``confirm`` before a
        fetch of a local address (``engine.protected``).

        The files a command changed are recorded (review, undo) however it ends, and each is
        published as an edit of the call (``file_edited``), as an edit tool's are. While
        another session runs a command in the workspace, the call waits (``workspace_wait``
        says for whom); past the watch's bound it is not run (an error result says why).
        """
        ctx = dataclasses.replace(
            self.ctx,
            host=ProtectedWrites(
                self.ctx.host,
                self.rt.permissions,
                root=self.rt.root,
                call=call,
                publish=self.rt.publish,
            ),
            confirm=local_fetch_consent(self.rt.permissions, call, self.rt.publish),
        )
        watch = self.rt.command_watch
        kind = prepared.tool.kind
        if watch is None or kind not in WATCHED_KINDS:
            return await run(prepared, ctx)

        def waiting(holder: str) -> None:
            self.rt.publish(WorkspaceWaited(tool_call_id=call.id, holder=holder))

        if kind != "execute":
            async with watch.editing(waiting) as busy:
                if busy is not None:
                    return ToolResult(
                        content=f"not written: {busy}. Try again later", is_error=True
                    )
                return await run(prepared, ctx)
        command = str(getattr(prepared.args, "command", prepared.title))
        if (busy := await watch.before(command, waiting)) is not None:
            return ToolResult(content=f"not run: {busy}. Try again later", is_error=True)
        try:
            return await run(prepared, ctx)
        finally:
            with anyio.CancelScope(shield=True):
                changed = await watch.after()
            self.rt.command_changed(call.id, changed)

    async def _invalidate(
        self, call: ToolCall, prepared: PreparedCall, result: ToolResult
    ) -> ToolResult:
        """Drop the cached results the call may have changed; publish and echo its edits.

        Edits drop what they touch; a call that may change files without saying which (a
        command, an MCP tool) drops every cached result.
        """
        if not result.edits:
            # An edit tool that made no edit (the file already had that text) changed nothing.
            if not prepared.tool.read_only and prepared.tool.kind != "edit":
                self.rt.cache.invalidate_all()
                self.rt.commands_ran += 0 if result.is_error else 1
                self.rt.tests_ran_on = None  # it may have changed what the tests read
            return result
        self.rt.stuck.workspace_changed()
        self.rt.cache.invalidate_paths([e.path for e in result.edits], self.rt.root)
        echoes: list[str] = []
        changes = [e for e in result.edits if e.kind == "change"]
        renamed: tuple[str, str] | None = None  # any file's: the last echo names what is left
        for edit in result.edits:
            name = relative_name(self.rt.root, edit.path)
            self.edited.append(name)
            renamed = record_edit(self.rt, edit, name) or renamed
            if self.loop.edit_echo and edit.kind == "change":
                closing = edit is changes[-1]
                echoes.append(await edit_notes(self.rt, edit, name, renamed, closing=closing))
            if self.loop.rules and (
                rules := nested_rules(
                    self.rt.root, edit.path, self.rt.rules_shown, self.rt.settings.context_size
                )
            ):
                echoes.append(f"\n{rules}")
            self.rt.publish(file_edited(call.id, name, edit.old_text, edit.new_text))
        if echoes:  # they quote the edited texts: redacted as the result was
            return dataclasses.replace(result, content=result.content + redact("".join(echoes)))
        return result


def _stuck_question(repeat: Repeat, call: ToolCall) -> Ended:
    """The movement's end after ``repeat.times`` noted repeats: a question, not a spent budget."""
    return ended(
        "needs_user_input",
        (
            f"Stopped: the model called {call.name} with the same arguments "
            f"{repeat.times + 1} times although each repeat was answered with a note."
        ),
        missing_info=f"how to go on: the model keeps repeating {call.name}({call.arguments})",
        why_no_default=(
            "the model is in a loop of identical calls; going on would spend the remaining "
            "steps on the same call"
        ),
    )
