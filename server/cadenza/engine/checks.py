"""Done means checked: the session's checks when the model claims done.

A ``complete(done)``, or a final answer under the ``empty`` ending, is accepted only once the
checks pass or their failures were shown to the model. A failing check refuses the claim: the
model reads what failed (as the ``complete`` call's error result, or after a final answer as a
user message) and goes on. After ``MAX_REFUSALS`` refusals in one movement run with a check
still failing, the movement ends as ``failed`` with the failures: a claim the checks contradict
never ends a session as ``end_turn``. Each check that applies is published as a ``check`` event.

The checks (``LoopSettings.checks``):

- ``rename``: after a rename the task is about (``Runtime.renames``), no whole-word use of the
  old name is left in the workspace (``engine.leftovers``). It must pass.
- ``changed``: something changed in the session (``Runtime.changed``). Only in a movement that
  offers an edit tool. When the movement made edit calls and every one failed, it must pass:
  the model meant to change something and did not (c14 of the ``checked`` set ended done that
  way). A whole-file write of the text the file already had applied and changed nothing: the
  detail says the file was written back unchanged, not that an edit failed. Otherwise shown
  once: a question needs no change, and whether the task asked for one is the model's call
  once it was told (a test of the task's wording would be a guess); a second claim is accepted.
- ``diagnostics``: the errors language servers report after the session's edits
  (``engine.diagnostics_check``), in the changed files and the files that use them. Shown
  once, like ``changed``: a language server also reports what the environment makes.
- ``tests``: once the checks above do not refuse the claim, the workspace's tests run
  (``engine.project_tests``, through the permission gate; or the run after the last change
  stands, ``engine.test_feedback``, when nothing changed since) if the session changed a file
  or ran a command, and must pass; or, shown once, if the model claims done again after ``changed``
  told it nothing changed (a task left undone fails its tests; a question's second claim runs
  them once). Not allowed, or nothing to run them with: ``skipped``, and said so. Tests that
  gave no result (the command could not run, no test was found) are never a pass: the model
  is told once (its work may be the cause), and the end message of a claim accepted without
  them says so.

``rename`` runs at the ``rename`` level and above; the others at ``all`` and ``acted``.

``acted`` (hosted models) checks only what the movement run did: a run that made no edit call,
changed nothing and ran no command (a question, an explanation) is accepted as it is, with no
check and no further request. Otherwise ``rename``; ``changed`` when the run made edit calls
(must pass when every one failed); ``diagnostics`` when the run changed files; the ``tests``
when it changed files or ran a command, as under ``all`` but counting this run's changes only.
``all`` (the small models, which claim done without doing anything) checks the session's.

At every level, a run whose edits the person declined (``Runtime.declined``: a permission
request, a review, a protected file) and that changed nothing and ran nothing is accepted as
it is, with no check: the model is never asked to make a change the person refused, and the
turn ends with its answer, as any turn does; what comes next is the person's to say. Edits
that failed on their own (a text not found, a stale buffer) are the model's to correct.

Each outcome's ``detail`` is what was found, in words for the person: the ``check`` event
and a ``failed`` end carry it. The model reads its ``nudge``: the same, and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cadenza.engine.diagnostics_check import changed_file_errors
from cadenza.engine.echo import leftover_places
from cadenza.engine.events import CheckRan
from cadenza.engine.leftovers import find_uses
from cadenza.engine.project_tests import run_tests
from cadenza.engine.runtime import Runtime
from cadenza.engine.test_feedback import last_run_still_holds, tested_state
from cadenza.engine.testsuite import is_test_file
from cadenza.engine.variants import ALL_EDIT_TOOLS, Checks
from cadenza.messages import AssistantMessage, ToolCall, ToolMessage
from cadenza.tools.base import ToolContext
from cadenza.tools.edit import UNCHANGED

MAX_REFUSALS = 2
"""Claims refused per movement run before failing checks end it as ``failed``."""

FIX_TESTS = "Read the failures and fix what makes them fail"
"""What the model is told to do about failing tests (its ``nudge``)."""
NO_RESULT = (
    "So nothing shows that the task is done. If your change caused this, fix it; otherwise "
    "claim done again and say that the tests gave no result"
)
"""What the model is told when the tests gave no result (``SuiteRun.cannot_run``)."""
FIX_ERRORS = (
    "Fix those your change caused (for example a caller that no longer matches a changed function)"
)
"""What the model is told to do about the errors a language server reports."""

CheckName = Literal["rename", "changed", "diagnostics", "tests"]


@dataclass(frozen=True, kw_only=True)
class CheckOutcome:
    """One check's verdict.

    Attributes:
        name: The check.
        passed: Whether it passed.
        detail: What was found, in words for the person (the ``check`` event, the end).
        nudge: What the model reads when the check refuses its claim: what was found and what
            to do about it ("": ``detail`` says it all).
        must_pass: False for a check whose failure only has to be shown once.
        skipped: The check could not be made (``passed`` is then True: nothing to refuse;
            but tests that gave no result are shown once, as their run may be the work's).
    """

    name: CheckName
    passed: bool
    detail: str
    nudge: str = ""
    must_pass: bool = True
    skipped: bool = False

    @property
    def for_model(self) -> str:
        """The text the model reads for this check."""
        return self.nudge or self.detail


@dataclass(frozen=True, kw_only=True)
class Accept:
    """The claim stands; ``unchecked``: that the tests did not confirm it, for the end message."""

    unchecked: str = ""


@dataclass(frozen=True, kw_only=True)
class Refuse:
    """The claim is refused; ``failures`` go back to the model."""

    failures: list[CheckOutcome]


@dataclass(frozen=True, kw_only=True)
class Fail:
    """Refused too often: the movement ends as ``failed`` with ``summary``.

    ``summary`` is for the person: the failing checks' details, not what the model was told.
    """

    summary: str


Verdict = Accept | Refuse | Fail


async def rename_checks(rt: Runtime) -> list[CheckOutcome]:
    """One ``rename`` check per rename of the session: the old name's uses left."""
    outcomes: list[CheckOutcome] = []
    for old, new in rt.renames.items():
        uses = await find_uses(rt.root, rt.editor, old)
        partial = "" if uses.complete else f" (the search stopped after {uses.files} files)"
        if uses.where:
            detail = (
                f"{old} is renamed to {new}, but {old} is still used in: "
                f"{leftover_places(uses.where)}{partial}"
            )
            nudge = f"{detail}. Change each of those to {new}"
            outcomes.append(CheckOutcome(name="rename", passed=False, detail=detail, nudge=nudge))
        else:
            detail = f"no use of {old} is left ({uses.files} files searched){partial}"
            outcomes.append(CheckOutcome(name="rename", passed=True, detail=detail))
    return outcomes


EDIT_CALLS = ALL_EDIT_TOOLS | {"create_file", "rename_symbol"}
"""Calls that change files: a movement that tried one meant to change something."""


@dataclass(frozen=True, kw_only=True)
class Done:
    """What the checks count as done.

    Attributes:
        changed: The files changed, in order (repeats kept).
        ran: A command ran (it may have changed files).
    """

    changed: list[str]
    ran: bool

    @property
    def acted(self) -> bool:
        """Something may have changed."""
        return bool(self.changed) or self.ran


def changed_check(
    done: Done, edit_tool: str, tried: list[str], kept: Sequence[str] = ()
) -> CheckOutcome:
    """The ``changed`` check: did any edit succeed?

    ``tried``: the names of the edit calls the movement made. When it made some and none
    succeeded the task asked for a change (the model thought so) and is not done: must pass.
    Otherwise it may be a question: shown once. ``kept``: the file of each of those calls that
    wrote a file back with the text it already had (it applied, and changed nothing).
    """
    if done.changed:
        files = ", ".join(dict.fromkeys(done.changed))
        return CheckOutcome(name="changed", passed=True, detail=f"changed: {files}")
    if done.ran:
        detail = "no edit, but a command ran that may have changed files"
        return CheckOutcome(name="changed", passed=True, detail=detail)
    if tried:
        why = _why_unchanged(len(tried), kept)
        nudge = (
            f"{why}, so the task is not done. Make the change with {edit_tool}: the text you "
            "write must differ from what the file holds"
            if kept
            else f"each of your {len(tried)} edit call(s) failed, so the task is not done. Make "
            f"the change with {edit_tool}, copying old_string exactly from the file as the "
            "conversation shows it"
        )
        return CheckOutcome(
            name="changed",
            passed=False,
            detail=f"nothing was changed: {why}",
            nudge=f"nothing was changed: {nudge}",
        )
    return CheckOutcome(
        name="changed",
        passed=False,
        must_pass=False,
        detail="nothing was changed in this session",
        nudge=(
            "nothing was changed in this session: no edit succeeded. If the task asks for a "
            f"change, make it now with {edit_tool}; if it only asks a question, claim done "
            "again with the answer as the summary"
        ),
    )


def _why_unchanged(tried: int, kept: Sequence[str]) -> str:
    """Why ``tried`` edit calls changed nothing, ``kept`` of them writes of a file's own text."""
    failed = tried - len(kept)
    if failed == tried:
        return (
            "the edit the agent tried did not apply"
            if tried == 1
            else f"none of the {tried} edits the agent tried applied"
        )
    files = list(dict.fromkeys(kept))
    written = (
        f"{', '.join(files)} {'was' if len(files) == 1 else 'were'} written back with the text "
        f"{'it' if len(files) == 1 else 'they'} already had"
    )
    if not failed:
        return written
    others = "the other edit" if failed == 1 else f"the other {failed} edits"
    return f"{written}, and {others} the agent tried did not apply"


class DoneChecks:
    """The checks of one movement run, and how many claims they refused.

    Args:
        runtime: The session.
        edit_tool: The movement's edit tool ("" when it offers none: then nothing has to
            change).
        ctx: What the movement's tools run with (the test run uses it).
    """

    def __init__(self, runtime: Runtime, edit_tool: str, ctx: ToolContext) -> None:
        self.rt = runtime
        self.edit_tool = edit_tool
        self.ctx = ctx
        self.refusals = 0
        self._shown: set[CheckName] = set()
        self._start = len(runtime.messages)  # this movement run's calls come after
        self._changed_from = len(runtime.changed)  # and its changes
        self._commands_from = runtime.commands_ran

    async def judge(self, *, can_refuse: bool = True) -> Verdict:
        """Run the checks on a claim of done; publish each; the verdict.

        Args:
            can_refuse: False when the model cannot be asked again (the movement's step bound
                ended it): failing checks then end it as ``failed`` at once.
        """
        level = self.rt.settings.loop.checks
        calls = self._edit_calls()
        tried = [call.name for call in calls]
        done = self._done(level)
        if level == "off" or (level == "acted" and not (tried or done.acted)):
            return Accept()  # ``acted``: nothing tried, nothing to check (a question)
        if any(call.id in self.rt.declined for call in calls) and not self._done("acted").acted:
            return Accept()  # the person declined the change: what comes next is theirs
        outcomes = await rename_checks(self.rt)
        if level != "rename":
            outcomes += await self._work_checks(level, done, tried)
        failing = [o for o in outcomes if self._blocks(o)]
        refuse = bool(failing) and can_refuse and self.refusals < MAX_REFUSALS
        for outcome in outcomes:
            self.rt.publish(
                CheckRan(
                    name=outcome.name,
                    status=_status(outcome),
                    detail=outcome.detail,
                    refused=refuse and outcome in failing,
                )
            )
        if not failing:
            skipped = [o.detail.rstrip(".") for o in outcomes if o.name == "tests" and o.skipped]
            return Accept(unchecked="".join(f"Not confirmed by the tests: {d}." for d in skipped))
        if refuse:
            self.refusals += 1
            self._shown |= {o.name for o in failing}
            return Refuse(failures=failing)
        blocking = [o for o in failing if o.must_pass] or failing
        return Fail(summary="Not done: " + "; ".join(o.detail for o in blocking))

    async def _work_checks(self, level: Checks, done: Done, tried: list[str]) -> list[CheckOutcome]:
        """``changed``, ``diagnostics`` and ``tests``, as far as ``level`` runs them."""
        outcomes: list[CheckOutcome] = []
        if self.edit_tool and (level == "all" or tried):
            outcomes.append(changed_check(done, self.edit_tool, tried, self._kept()))
        if self.rt.written and (level == "all" or done.changed):
            outcomes += await self._diagnostics()
        if self._tests_due(outcomes, done, level):
            outcomes += await self._tests(done)
        return outcomes

    def _done(self, level: Checks) -> Done:
        """What was done: in the session, or under ``acted`` in this movement run."""
        if level == "acted":
            return Done(
                changed=self.rt.changed[self._changed_from :],
                ran=self.rt.commands_ran > self._commands_from,
            )
        return Done(changed=self.rt.changed, ran=self.rt.commands_ran > 0)

    def _edit_calls(self) -> list[ToolCall]:
        """The edit calls this movement run made, in order."""
        return [
            call
            for message in self.rt.messages[self._start :]
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls
            if call.name in EDIT_CALLS
        ]

    def _kept(self) -> list[str]:
        """The file of each whole-file write this movement run made that changed nothing."""
        return [
            message.content.partition(f" {UNCHANGED}")[0]
            for message in self.rt.messages[self._start :]
            if isinstance(message, ToolMessage) and message.unchanged
        ]

    def _blocks(self, outcome: CheckOutcome) -> bool:
        """Whether a failed check refuses the claim (one shown once does not again)."""
        return not outcome.passed and (outcome.must_pass or outcome.name not in self._shown)

    def _tests_due(self, outcomes: list[CheckOutcome], done: Done, level: Checks) -> bool:
        """Whether this claim runs the tests.

        When no check refuses it (under ``all``, ``changed`` refusing edits that changed
        nothing aside: a change was meant, the failures say which, and candidates may follow)
        and something was done (``_done``). With nothing done, once: then, or when the model
        claims done again after it was told that nothing changed (a stub left untouched fails
        its tests: the model must see that).
        """
        if not self.edit_tool:
            return False
        blocking = [o for o in outcomes if self._blocks(o)]
        meant = level == "all" and all(o.name == "changed" and o.must_pass for o in blocking)
        if blocking and not meant:
            return False
        if done.acted:
            return True
        if "tests" in self._shown:
            return False  # nothing new to test
        return bool(blocking) or "changed" in self._shown

    async def _diagnostics(self) -> list[CheckOutcome]:
        """The ``diagnostics`` check, when a language server serves the changed files."""
        found = await changed_file_errors(self.rt, self.ctx)
        if found is None:
            return []
        failed = found.status == "failed"
        return [
            CheckOutcome(
                name="diagnostics",
                passed=not failed,
                skipped=found.status == "skipped",
                must_pass=False,
                detail=found.detail,
                nudge=f"{found.detail}\n{FIX_ERRORS}" if failed else "",
            )
        ]

    async def _tests(self, done: Done) -> list[CheckOutcome]:
        """The ``tests`` check, when the workspace has tests.

        Run only after the cheaper checks passed: a broken rename fails its tests anyway.
        """
        held = last_run_still_holds(self.rt)
        ran = held or await run_tests(self.rt, self.ctx)
        if ran is None:
            return []
        if held is None and ran.status != "skipped":  # the next step's candidates judge by it
            self.rt.tests_ran_on, self.rt.tests_last = tested_state(self.rt), ran
        acted = done.acted
        detail = ran.detail
        if held is not None:
            detail += " (the run after the last change: nothing changed since)"
        failed = ran.status == "failed"
        if failed and not acted:
            detail = f"nothing was changed in this session and {detail}"
        if changed := changed_tests(self.rt):  # passing tests the session rewrote prove less
            detail += f"; this session changed the tests themselves: {', '.join(changed)}"
        nudge = f"{detail}\n{FIX_TESTS}" if failed and not ran.timed_out else ""
        return [
            CheckOutcome(
                name="tests",
                passed=not (failed or ran.cannot_run),  # no result is never a pass: told once
                skipped=ran.status == "skipped",
                must_pass=acted and failed,  # with nothing changed it failed before: shown once
                detail=detail,
                nudge=f"{detail}\n{NO_RESULT}" if ran.cannot_run else nudge,
            )
        ]


def changed_tests(rt: Runtime) -> list[str]:
    """Workspace-relative names of the tests (``is_test_file``) the session wrote."""
    roots = (rt.root, rt.root.resolve())  # the tools write resolved paths
    names = {
        path.relative_to(root) for path in rt.written for root in roots if path.is_relative_to(root)
    }
    return sorted(str(name) for name in names if is_test_file(name))


def _status(outcome: CheckOutcome) -> Literal["passed", "failed", "skipped"]:
    if outcome.skipped:
        return "skipped"
    return "passed" if outcome.passed else "failed"


def refusal_text(failures: list[CheckOutcome], finish: str) -> str:
    """What the model reads when its claim of done was refused (``finish``: how to claim)."""
    lines = [f"- {o.for_model}" for o in failures]
    return "\n".join(
        [
            "not accepted yet: the task is not done, a check failed:",
            *lines,
            f"Do that now; then {finish}.",
        ]
    )
