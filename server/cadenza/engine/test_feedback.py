"""The tests as the judge during the work (``LoopSettings.test_feedback``), not only at the claim.

After a step whose calls changed files, the workspace's tests run (``project_tests.run_tests``
with purpose ``change``: the same command, permission gate and tool call as the done check;
allowing it once allows it for the session) and the model reads, as one user message after
the step's tool results, the failing tests' names and assertions first and short
(``test_report.digest``), or plainly that all of them pass and how to finish: a small model
that reads "all 12 tests pass" can claim done, and one that reads ``assert 88 == 3`` under the
test's own line has something to fix.

A run that gives no result (the command could not run, its runner is missing, no test was
found or reported) is said as such, never as a pass: the change may be the cause. It is said
once while the reason stays the same.

Not run: when the files are as they were at the last run (an edit undone, a failed edit),
when the person did not allow the command (not asked again), when the workspace has no test
command, and when the run's time budget has less than ``MIN_LEFT_S`` left. A run is bounded
by the test timeout and by the time left. The done check at a claim takes the last run when
nothing changed since (``last_run_still_holds``): no test run twice on the same files.
"""

from __future__ import annotations

import json

from cadenza.engine.project_tests import run_tests
from cadenza.engine.runtime import Runtime
from cadenza.engine.test_report import Failure, digest, read_report
from cadenza.engine.testsuite import SuiteCommand, SuiteRun, suite_command
from cadenza.engine.variants import finish_hint
from cadenza.messages import ToolCall
from cadenza.tools.base import ToolContext
from cadenza.tools.paths import relative_name

MIN_LEFT_S = 10.0
"""Seconds of the time budget a run needs left to start (less could not judge anything)."""


def tested_state(rt: Runtime) -> tuple[tuple[str, str], ...]:
    """The session's changed files and their texts: what a test run after a change judged."""
    return tuple(sorted((relative_name(rt.root, p), text) for p, text in rt.written.items()))


async def feedback_after_change(rt: Runtime, ctx: ToolContext) -> str | None:
    """Run the tests after a step that changed files; what the model reads, or None.

    None: not run, or nothing to say (see the module docstring).

    Raises:
        Only cancellation.
    """
    state = tested_state(rt)
    if state == rt.tests_ran_on:
        return None
    left = rt.clock.left_s
    if left < MIN_LEFT_S:
        return None
    ran = await run_tests(
        rt, ctx, purpose="change", timeout_s=min(rt.settings.test_timeout_s, left)
    )
    if ran is None or (ran.status == "skipped" and not ran.cannot_run):
        return None
    told = rt.tests_last
    rt.tests_ran_on, rt.tests_last = state, ran
    if ran.cannot_run:
        rt.tests_verdict = "no result"
        # Said once, not after each change while the reason stays the same.
        repeated = told is not None and told.cannot_run and told.detail == ran.detail
        return None if repeated else no_result(ran)
    rt.tests_verdict = summary(ran.counts) or ran.status
    return feedback(ran, finish_hint(rt.settings.loop.ending))


def runs_unasked(rt: Runtime, suite: SuiteCommand) -> bool:
    """Whether the tests may run without asking: allowed for the session, or by the rules."""
    if rt.tests_declined:
        return False
    arguments = json.dumps({"command": suite.command})
    call = ToolCall(id="tests-unasked", name="run_command", arguments=arguments)
    return rt.tests_allowed == suite.command or rt.permissions.runs_unasked(call)


async def feedback_at_start(rt: Runtime, ctx: ToolContext) -> str | None:
    """Run the tests once as a run begins, when they may run unasked; what the model reads.

    A fix asked for in words ("the total is wrong") is a fix the failing tests can show: the
    first reply then reads the failure, not only the files, and the candidates can start at
    the first step (their trials need a failing run on the files). Never a prompt before the
    model has said anything: a command the person has not allowed is not run here. Nothing is
    said when the tests pass or could not run, or when the code is not written yet
    (``unwritten``); the run still counts for the candidates of later steps.

    Raises:
        Only cancellation.
    """
    state = tested_state(rt)
    suite = suite_command(rt.root, rt.settings.test_command)
    if state == rt.tests_ran_on or suite is None or not runs_unasked(rt, suite):
        return None
    left = rt.clock.left_s
    if left < MIN_LEFT_S:
        return None
    ran = await run_tests(rt, ctx, purpose="start", timeout_s=min(rt.settings.test_timeout_s, left))
    if ran is None or ran.status == "skipped":
        return None
    rt.tests_ran_on, rt.tests_last = state, ran
    rt.tests_verdict = summary(ran.counts) or ran.status
    if ran.status == "passed" or unwritten(read_report(ran.output).failures):
        return None
    if ran.timed_out:
        return (
            "Before any change, the project's tests ran and did not finish in time; they were "
            f"stopped. The end of their output:\n{digest(ran.output)}"
        )
    if ran.doubt:
        return (
            f"Before any change, the project's tests ran, but {ran.doubt}. The end of their "
            f"output:\n{digest(ran.output)}"
        )
    counts = f": {summary(ran.counts)}" if ran.counts else " and fail"
    return (
        f"Before any change, the project's tests ran on the files as they are{counts}. "
        f"The failures:\n{digest(ran.output)}"
    )


def no_result(ran: SuiteRun) -> str:
    """What the model reads when the tests gave no result after a change: never a pass."""
    return (
        f"The tests gave no result after your change: {ran.detail}. So nothing shows that the "
        "change works; if your change caused this, fix it."
    )


def summary(counts: dict[str, int]) -> str:
    """``2 failed, 5 passed`` ("" when no count is known)."""
    return ", ".join(f"{n} {what}" for what, n in counts.items())


def unwritten(failures: list[Failure]) -> bool:
    """Whether every failure is ``NotImplementedError``: code not written yet, not a bug.

    Its failures say nothing the task does not, and read last they cost the reply its form:
    on HumanEval stubs the 1.5B model then wrote its code without the file's path line (no
    edit), and tasks took 64-125 s where they had taken 18-24 s.
    """
    return bool(failures) and all(
        any("NotImplementedError" in line for line in f.errors) for f in failures
    )


def last_run_still_holds(rt: Runtime) -> SuiteRun | None:
    """The run after the last change, when nothing changed since: the done check takes it.

    Nothing changed since: the changed files are as that run found them and no command ran
    after it (a command may change what the tests read).
    """
    if rt.tests_last is None or rt.tests_ran_on != tested_state(rt):
        return None
    return rt.tests_last


def feedback(ran: SuiteRun, finish: str) -> str:
    """The message of one run after a change: the verdict and counts, then the failures.

    Args:
        ran: The run (passed or failed).
        finish: How the model claims done (``variants.finish_hint``).
    """
    counts = ran.counts
    if ran.status == "passed":
        passed = counts.get("passed")
        verdict = f"all {passed} tests pass" if passed else "the tests pass"
        others = {k: n for k, n in counts.items() if k != "passed"}
        extra = ", ".join(f"{n} {what}" for what, n in others.items())
        verdict += f" ({extra})" if extra else ""
        return f"The tests ran after your change: {verdict}. If the task is done, {finish}."
    if ran.timed_out:
        return (
            "The tests ran after your change and did not finish in time; they were stopped "
            "(something may loop forever or wait for input). The end of their output:\n"
            f"{digest(ran.output)}"
        )
    if ran.doubt:
        return (
            f"The tests ran after your change, but {ran.doubt}. The end of their output:\n"
            f"{digest(ran.output)}\nRemove what ends the test run or prints a result of its own."
        )
    head = (
        f"The tests ran after your change: {summary(counts)}."
        if counts
        else ("The tests ran after your change and fail.")
    )
    return f"{head} The failures:\n{digest(ran.output)}\nFix what makes them fail."
