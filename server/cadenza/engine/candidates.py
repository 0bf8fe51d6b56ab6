"""Candidate replies (``LoopSettings.candidates``): several at once when the tests can judge them.

When the tests failed on the session's current files (the run after the last change still
holds), or the last reply's changes were all refused (a file the syntax guard would not write,
an edit whose text is not found: a small model repeats such a reply from a context that holds
it) with no passing run since, the workspace has a test command and the person allowed it for
the session, and the person does not review each change before it applies
(``SessionSettings.reviews_each_change``, the LSP face's review mode ``confirm``: a trial would
run code nobody reviewed), a step asks for N replies at once instead of one: the step's own
request, and N - 1 more that start afresh from the turn's beginning (the task and its files,
without the attempts and failures since), sampled at ``CANDIDATE_TEMPERATURE``, each with its
own seed (``ModelRequest.seed``) and lane (``ModelRequest.lane``: the embedded server gives each
its own slot, so they are written side by side). Each reply's file changes are made in a scratch
copy of the workspace and the tests run there (``engine.scratch``), one copy at a time. When
the tests failed on the files as the movement began (a fix, not new code), the fresh lanes
read those failures after the task, and under the text edit format the first of them is shown
the failing functions alone instead of the files (``engine.focus``). The
reply whose run passes most tests is kept (ties: the shortest reply, then the earliest), and
only it goes on, as the step's reply: into the history and through the normal path (the batch,
the edit path with its versions, review, checkpoints and undo, the tests after the change, whose
failures the model reads next). Nothing of the other replies is written anywhere but in their
copies, which are removed.

A reply that changes no file (or writes files back with their own text) counts the last
run's passes, without a run. One that cannot be
judged (a change of it failed: an edit whose text is not found, or one that breaks the file's
syntax under the syntax guard; it was cut; its request failed; no time was left) loses to every
judged one; so does one with a change the person would be asked about first (a gated tool no
rule or "always" answer allows: its trial would run the change unasked); when none could be
judged, the first reply that came is kept. The person sees a ``CandidatesTried`` event: how
many were asked for, which was kept, each one's passes.

Bounded by the run's time budget: the requests and the runs are inside the step's bound (the
step stops when the time is spent), a trial starts only with ``MIN_LEFT_S`` left, and each
run is bounded by the test timeout and the time left.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import tempfile
from pathlib import Path

import anyio

from cadenza.engine.events import (
    Activity,
    CandidatesTried,
    ToolCallFinished,
    ToolCallStarted,
)
from cadenza.engine.focus import Function, failing_functions, focus_message, focused_reply
from cadenza.engine.ports import CommandChange
from cadenza.engine.reply_watch import ReplyWatch
from cadenza.engine.request import complete_reply, is_cut
from cadenza.engine.runtime import Runtime
from cadenza.engine.scratch import (
    COUNTED,
    InstalledModules,
    ScratchHost,
    TooLarge,
    Trial,
    copy_workspace,
    file_changes,
    make_changes,
    run_suite,
    scratch_context,
)
from cadenza.engine.test_feedback import (
    MIN_LEFT_S,
    last_run_still_holds,
    runs_unasked,
    tested_state,
)
from cadenza.engine.test_report import digest
from cadenza.engine.testsuite import SuiteCommand, suite_command
from cadenza.messages import (
    AssistantMessage,
    AssistantReply,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from cadenza.providers.base import ModelRequest, ProviderError
from cadenza.tools.base import ToolContext

log = logging.getLogger(__name__)

CANDIDATE_TEMPERATURE = 0.7
"""The other candidates' temperature (at least): a greedy model gives one reply whatever the
seed."""

TRIALS = "test runs of the candidate replies"
"""What the trials are called where the person reads of them."""

SEEDS_PER_STEP = 64
"""Seeds are ``step * SEEDS_PER_STEP + lane + 1``: a fresh lane's request is the same at every
step, so only its seed makes the next step's sample another one."""


class Candidates:
    """The candidates of a movement's steps (``ready``, then ``pick`` as ``ask_model``'s pick).

    Args:
        rt: The session.
        ctx: What its tools run with (the trials' copies take its settings).
        offered: The tools the movement offers: a change through another one fails, as it
            would in the session.
    """

    def __init__(self, rt: Runtime, ctx: ToolContext, offered: frozenset[str]) -> None:
        self.rt = rt
        self.ctx = ctx
        self.offered = offered
        self._start = tested_state(rt)
        """The changed files as the movement began: the files its fresh lanes are shown."""
        self._first_failures: str | None = None
        """The failures of a run on those files, once one failed: what fresh lanes read."""
        self._unusable: dict[int, str] = {}
        """This round's lanes whose reply was set aside unjudged, and why."""

    def ready(self) -> bool:
        """Whether this step asks for candidates (see the module docstring)."""
        rt = self.rt
        if rt.settings.loop.candidates < 2 or rt.tests_declined:
            return False
        last = last_run_still_holds(rt)
        failed = last is not None and last.status == "failed"
        if failed and self._first_failures is None and rt.tests_ran_on == self._start:
            assert last is not None
            self._first_failures = digest(last.output)
        if not failed and not (refused_change(rt) and (last is None or last.status != "passed")):
            return False
        if rt.steps - rt.run_start <= 1:
            # The first reply is the model's own, the failures of the tests before it read:
            # on the bugfix set, candidates from the first step fixed 1 of 6 in 300 s, from
            # the second 2 of 6 (three replies at once take each about three times as long).
            return False
        suite = suite_command(rt.root, rt.settings.test_command)
        if suite is None:
            return False
        if not runs_unasked(rt, suite):  # neither allowed for the session nor by the rules
            return False
        return not rt.settings.reviews_each_change and rt.clock.left_s >= 2 * MIN_LEFT_S

    async def pick(self, request: ModelRequest) -> AssistantReply:
        """Ask for the candidates of ``request``, try them, and return the one kept.

        Raises:
            ProviderError: Every request failed (the step's own request's error).
        """
        replies = await self._ask(request)
        suite = suite_command(self.rt.root, self.rt.settings.test_command)
        trials = [Trial(passed=None, why="no test command") for _ in replies]
        if suite is not None:
            trials = await self._try_all(replies, suite)
        for lane, why in self._unusable.items():
            trials[lane] = Trial(passed=None, why=why)
        kept = choose(replies, trials)
        for number, trial in enumerate(trials, start=1):
            if trial.why:
                log.info("candidate %d of %d not judged: %s", number, len(trials), trial.why)
        totals = [t.total for t in trials if t.total is not None]
        self.rt.publish(
            CandidatesTried(
                step=self.rt.steps,
                tried=len(replies),
                kept=kept + 1,
                passed=[t.passed for t in trials],
                why=[t.why if t.passed is None else "" for t in trials],
                of=max(totals) if totals else None,
            )
        )
        reply = replies[kept]
        assert reply is not None  # choose keeps a reply that came
        return reply

    async def _ask(self, request: ModelRequest) -> list[AssistantReply | None]:
        """The N requests at once; a failed one is None (all failed: the first one's error)."""
        rt = self.rt
        count = rt.settings.loop.candidates
        replies: list[AssistantReply | None] = [None] * count
        errors: list[ProviderError] = []
        self._unusable = {}
        focus = await self._focus()

        async def ask(lane: int) -> None:
            try:
                note = focus_message(*focus) if focus and lane == 1 else None
                asked = lane_request(rt, request, lane, self._first_failures, note)
                reply = await complete_reply(rt, asked, None)
                if note is not None and focus is not None:
                    reply = focused_reply(reply, focus[0], id_prefix=f"text_{rt.steps}")
                    if not reply.tool_calls and not is_cut(reply):  # nothing to judge or keep
                        self._unusable[lane] = "it rewrote none of the functions it was shown"
                        return
                replies[lane] = reply
            except ProviderError as exc:
                log.warning("candidate %d of %d: %s", lane + 1, count, exc)
                errors.append(exc)

        async with anyio.create_task_group() as group:
            for lane in range(count):
                group.start_soon(ask, lane)
        if all(r is None for r in replies) and errors:
            raise errors[0]
        return replies

    async def _focus(self) -> tuple[list[Function], str] | None:
        """The functions a focused lane is shown and the failures, when the task is a fix.

        A fix: the tests failed on the files as the movement began. The failures shown are
        the last run's when it still holds, else that first run's.
        """
        if self._first_failures is None or self.rt.settings.loop.edit != "text":
            return None
        last = last_run_still_holds(self.rt)
        holds = last is not None and last.status == "failed"
        failures = digest(last.output) if holds and last is not None else self._first_failures
        rt = self.rt
        functions = await anyio.to_thread.run_sync(
            failing_functions, rt.root, rt.task_files, failures
        )
        return (functions, failures) if functions else None

    async def _try_all(
        self, replies: list[AssistantReply | None], suite: SuiteCommand
    ) -> list[Trial]:
        """Each reply's trial, one copy at a time (a copy that cannot be made: none tried)."""
        rt = self.rt
        last = last_run_still_holds(rt)
        counts = last.counts if last is not None else {}
        before = Trial(
            passed=counts.get("passed", 0),
            total=sum(n for what, n in counts.items() if what in COUNTED) or None,
        )
        installed = InstalledModules(rt.root)  # listed once for the round's copies
        watch = rt.command_watch
        # A reply's code runs as the person under their consent to run the tests, and a copy
        # is not a sandbox: what its run changes in the workspace is recorded as a command's.
        if watch is not None and await watch.before(TRIALS, lambda _holder: None) is not None:
            return [Trial(passed=None, why="the workspace was busy") for _ in replies]
        trials: list[Trial] = []
        try:
            for number, reply in enumerate(replies, start=1):
                try:
                    trials.append(await self._try(reply, suite, before, number, installed))
                except (TooLarge, OSError) as exc:
                    log.warning("candidates not tried: the workspace cannot be copied: %s", exc)
                    why = "the workspace could not be copied"
                    return [Trial(passed=None, why=why) for _ in replies]
            return trials
        finally:
            if watch is not None:
                with anyio.CancelScope(shield=True):
                    outside = await watch.after()
                if outside:
                    self._changed_outside(outside)

    def _changed_outside(self, changes: list[CommandChange]) -> None:
        """Show the files the trials changed in the workspace, outside their copies.

        They are recorded like a command's changes (review, undo); the person reads them as a
        failed call of their own.
        """
        rt = self.rt
        call = rt.call_ids.claim(ToolCall(id="candidate-trials", name="run_command", arguments=""))
        rt.publish(
            ToolCallStarted(
                tool_call_id=call.id,
                name=call.name,
                title=f"The {TRIALS} changed files of the workspace itself",
                tool_kind="execute",
                raw_input="",
            )
        )
        rt.command_changed(call.id, changes)
        rt.cache.invalidate_all()
        names = ", ".join(c.path for c in changes)
        log.warning("the %s changed files outside their copies: %s", TRIALS, names)
        rt.publish(
            ToolCallFinished(
                tool_call_id=call.id,
                status="failed",
                content=(
                    f"The {TRIALS} changed files outside their copies: {names}. The changes are "
                    "recorded with the session's own, so undoing the session puts them back."
                ),
            )
        )

    async def _try(
        self,
        reply: AssistantReply | None,
        suite: SuiteCommand,
        before: Trial,
        number: int,
        installed: InstalledModules,
    ) -> Trial:
        rt = self.rt
        if reply is None:
            return Trial(passed=None, why="its request failed")
        if is_cut(reply):
            return Trial(passed=None, why="it was cut off")
        changes = file_changes(rt, reply.tool_calls)
        if not changes:
            return dataclasses.replace(before, changes=False)
        if any(c.name not in self.offered for c in changes):
            return Trial(passed=None, why="it used a tool not offered")
        if not all(rt.permissions.runs_unasked(c) for c in changes):
            # Its test run would run a change the person has not allowed.
            return Trial(passed=None, why="its change needs your permission")
        left = rt.clock.left_s
        if left < MIN_LEFT_S:
            return Trial(passed=None, why="no time was left")
        self._progress(f"trying reply {number} of {rt.settings.loop.candidates} on a copy")
        folder = Path(tempfile.mkdtemp(prefix="cadenza-candidate-"))
        try:
            await anyio.to_thread.run_sync(copy_workspace, rt.root, folder)
            ctx = scratch_context(self.ctx, rt, folder, installed)
            unjudged = await self._make(ctx, changes, before, number)
            if unjudged is not None:
                return unjudged
            bound = min(rt.settings.test_timeout_s, rt.clock.left_s)
            passed, total = await run_suite(ctx, rt, suite, bound)
            why = "" if passed is not None else "the test run could not judge it"
            return Trial(passed=passed, total=total, why=why)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(shutil.rmtree, folder, True)

    async def _make(
        self, ctx: ToolContext, changes: list[ToolCall], before: Trial, number: int
    ) -> Trial | None:
        """Make a reply's ``changes`` in the copy ``ctx`` works in: its trial when it ends there."""
        failed = await make_changes(self.rt, ctx, changes)
        if failed:
            log.info("candidate %d: its change failed: %s", number, failed)
            return Trial(passed=None, why="its change did not apply")
        if not isinstance(ctx.host, ScratchHost):
            return None
        if not ctx.host.applied:  # files written back as they were
            return dataclasses.replace(before, changes=False)
        unnamed = await anyio.to_thread.run_sync(ctx.host.unnamed_modules)
        if unnamed:
            log.info("candidate %d: no file names its new %s", number, unnamed)
            return Trial(passed=None, why="it adds a module no other file uses")
        return None

    def _progress(self, doing: str) -> None:
        rt = self.rt
        rt.publish(
            Activity(
                step=rt.steps - rt.run_start,
                max_steps=rt.settings.max_steps,
                doing=doing,
                tokens=0,
                elapsed_s=round(rt.clock.elapsed_s, 1),
                budget_s=rt.clock.budget_s,
            )
        )


def refused_change(rt: Runtime) -> bool:
    """Whether the turn's last reply changed files and each of those changes failed.

    A file written back with its own text counts as failed: the 1.5B model, shown a failing
    test's files, wrote them back unchanged step after step, and the candidates written
    afresh are what finds a change then. A change the person declined does not count: their
    answer is not the model's mistake.
    """
    results: dict[str, ToolMessage] = {}
    for message in reversed(rt.messages):
        if isinstance(message, ToolMessage):
            results[message.tool_call_id] = message
        elif isinstance(message, AssistantMessage):
            changes = file_changes(rt, message.tool_calls)
            return bool(changes) and all(
                c.id in results and _changed_nothing(results[c.id]) and c.id not in rt.declined
                for c in changes
            )
        elif isinstance(message, UserMessage) and message.tag == "task":  # no reply yet
            return False
    return False


def _changed_nothing(result: ToolMessage) -> bool:
    """Whether a file change's result says it failed or left the file as it was."""
    return result.is_error or result.unchanged


def lane_request(
    rt: Runtime,
    request: ModelRequest,
    lane: int,
    failures: str | None = None,
    focus: str | None = None,
) -> ModelRequest:
    """Candidate ``lane``'s request: its own seed, lane and watch; sampled unless it is lane 0.

    Lane 0 is the step's own request. The other lanes start afresh from the turn's beginning
    (``fresh_messages``): a small model shown its failed attempt and the failures writes the
    same code again, sampled or not, while the task alone sampled gives other attempts for the
    tests to judge. ``failures``: those of a run on the files as the fresh lanes are shown
    them, when one failed (the task is a fix): the lanes read them after the task, since "fix
    the failing test" says nothing of what fails and the assertion does. ``focus``: that lane
    is shown the failing functions alone instead of the files (``engine.focus``). Only lane
    0's watch reports progress (one progress line for the step).
    """
    temperature = request.temperature
    messages = request.messages
    if lane:
        temperature = max(temperature or 0.0, CANDIDATE_TEMPERATURE)
        messages = fresh_messages(messages)
        if focus is not None:
            messages = [
                m for m in messages if not (isinstance(m, UserMessage) and m.tag == "files")
            ]
            messages = [*messages, UserMessage(tag="check", content=focus)]
        elif failures is not None:
            messages = [*messages, UserMessage(tag="check", content=failures_note(failures))]
    watch = request.watch
    stop = watch.stop_repeats if isinstance(watch, ReplyWatch) else False
    return dataclasses.replace(
        request,
        messages=messages,
        temperature=temperature,
        seed=rt.steps * SEEDS_PER_STEP + lane + 1,
        lane=lane,
        watch=ReplyWatch(rt, stop_repeats=stop, report=lane == 0),
    )


def failures_note(failures: str) -> str:
    """What a fresh lane reads after the task: the tests' failures on the files it was shown."""
    return f"The tests were run on these files and fail:\n{failures}\nFix what makes them fail."


def fresh_messages(messages: list[Message]) -> list[Message]:
    """The conversation as the turn began, before the model's first reply to the last task.

    The person's last task and what came with it (the files primed for it) end it. Without a
    task in the conversation, or with nothing after it yet, the whole conversation.
    """
    starts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage) and m.tag == "task"]
    if not starts:
        return messages
    end = starts[-1] + 1
    while end < len(messages) and isinstance(messages[end], UserMessage):
        end += 1
    return messages[:end]


def choose(replies: list[AssistantReply | None], trials: list[Trial]) -> int:
    """The index of the reply kept: most tests passed, a change, the shortest, the earliest.

    A reply that could not be judged loses to every judged one; none judged: the first reply
    that came. A reply without changes ties with the changes that pass as many tests as the last
    run, and would win as the shortest: it is a claim of done that the failing tests refuse.
    """
    judged = [i for i, t in enumerate(trials) if t.passed is not None and replies[i] is not None]
    if not judged:
        return next(i for i, r in enumerate(replies) if r is not None)

    def rank(i: int) -> tuple[int, bool, int, int]:
        reply = replies[i]
        assert reply is not None
        passed = trials[i].passed or 0
        return (-passed, not trials[i].changes, reply_size(reply), i)

    return min(judged, key=rank)


def reply_size(reply: AssistantReply) -> int:
    """How long a reply is: its text and its calls' arguments (characters)."""
    return len(reply.content) + sum(len(c.name) + len(c.arguments) for c in reply.tool_calls)
