"""The done check ``tests``: the project's own tests run before a claim of done is accepted.

The command (``engine.testsuite``: ``[checks] test``, else detected) runs as the session's own
``run_command`` tool does (the ACP face's runs in the client's terminal), through the same
permission gate: the person is asked as for any command (a remembered "always" answer for
``run_command`` holds), and sees the run as a tool call of its own (``check-tests``) with its
output. A call not allowed (rejected, dismissed, unanswered) skips the check, says so, and
is not asked again in the session. The run is bounded by ``SessionSettings.test_timeout_s``
and the tool's output bound. When Cadenza built the pytest command itself, the command asks
pytest for its report in a temporary folder outside the workspace (``engine.junit``: the tool
call shows it; the person and their rules are asked about the command without it), and the
verdict (``engine.suite_verdict``) takes that report. The same run serves the tests after a
change (``engine.test_feedback``, call ``change-tests``): its prompt asks for the whole
session, so allowing it once allows the later runs, the done check's too.

A run that gives no verdict (the command could not start, the runner is missing, no test was
found) skips the check with ``cannot_run``: the done check tells the model and the person that
nothing confirmed the work (``engine.checks``). A changed file the editor holds unsaved skips
the check too (an editor applies ``workspace/applyEdit`` to its buffers; the tests read the
disk, and would judge the old code). The run may write files, so, as an edit, it never runs
inside another session's command (``CommandWatch.editing``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

import anyio

from cadenza.engine.events import (
    PermissionDecided,
    ToolCallFinished,
    ToolCallStarted,
    WorkspaceWaited,
)
from cadenza.engine.junit import ReportFile, base_command, report_file
from cadenza.engine.permissions import PermissionRequest, Verdict
from cadenza.engine.runtime import Runtime
from cadenza.engine.suite_verdict import judge_output
from cadenza.engine.testsuite import SuiteCommand, SuiteRun, suite_command
from cadenza.messages import ToolCall
from cadenza.textio import decode_bytes
from cadenza.tools.base import ToolContext, ToolResult
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.paths import relative_name
from cadenza.workspace_files import WorkspaceFileError, read_workspace_file

MAX_WRITTEN_BYTES = 50_000_000
"""A changed file larger than this on disk counts as not the session's text."""

NOT_ALLOWED: dict[Verdict, str] = {
    "rejected": "the person did not allow running them",
    "cancelled": "the permission request was dismissed",
    "timeout": "the permission request got no answer",
    "allowed": "",
}


Purpose = Literal["done", "change", "start"]
"""Why the tests run: a claim of done (the done check), a change, or a run's start
(``test_feedback``)."""

TITLES: dict[Purpose, tuple[str, str]] = {
    "done": (
        "Checking the tests",
        "Run the project's tests before accepting done, and again when needed in this session",
    ),
    "change": ("Running the tests after the change", "Run the project's tests after each change"),
    "start": ("Running the tests before any change", "Run the project's tests"),
}
"""The tool call's title and the permission prompt's, per purpose."""


def answered_tests(events: Iterable[object]) -> tuple[str, str]:
    """What the person answered about the test runs of a session, from its recorded events.

    The answer holds for the session (its prompt says so), so a session rebuilt from its
    transcript keeps it (``Runtime.tests_allowed``, ``Runtime.tests_declined``).

    Returns:
        The test command the person allowed ("" none), and why the tests may not run ("": they
        may, or nobody was asked).
    """
    titles = tuple(f"{title}: " for title, _ask in TITLES.values())
    commands: dict[str, str] = {}
    allowed = declined = ""
    for event in events:
        if isinstance(event, ToolCallStarted) and event.title.startswith(titles):
            try:
                command = json.loads(event.raw_input).get("command", "")
            except (ValueError, AttributeError):
                continue
            commands[event.tool_call_id] = base_command(str(command))
        elif isinstance(event, PermissionDecided) and event.tool_call_id in commands:
            command = commands.pop(event.tool_call_id)
            if event.verdict == "allowed":
                allowed = command
            else:
                declined = NOT_ALLOWED[event.verdict]
    return allowed, declined


async def run_tests(
    rt: Runtime, ctx: ToolContext, *, purpose: Purpose = "done", timeout_s: float | None = None
) -> SuiteRun | None:
    """Run the workspace's tests; None when it has none.

    Args:
        rt: The session.
        ctx: What the tools run with.
        purpose: ``done``: a claim of done; ``change``: after a change. Allowing a run after a
            change allows the test command for the rest of the session (its prompt says so).
        timeout_s: The run's bound (default ``SessionSettings.test_timeout_s``).

    Raises:
        Only cancellation (the run is stopped and its tool call ends first).
    """
    suite = suite_command(rt.root, rt.settings.test_command)
    if suite is None:
        return None
    if rt.tests_declined:
        return SuiteRun(status="skipped", detail=f"the tests were not run: {rt.tests_declined}")
    unsaved = unsaved_files(rt)
    if unsaved:
        return SuiteRun(
            status="skipped",
            detail=(
                f"the tests were not run: {', '.join(unsaved)} not saved (the editor holds the "
                "session's changes; the tests would run the code on disk). Save, then ask again"
            ),
        )
    bound = rt.settings.test_timeout_s if timeout_s is None else timeout_s
    with report_file(suite.junit) as report:
        return await _run(rt, ctx, suite, purpose, bound, report)


async def _run(
    rt: Runtime,
    ctx: ToolContext,
    suite: SuiteCommand,
    purpose: Purpose,
    bound: float,
    report: ReportFile | None,
) -> SuiteRun:
    """Ask (unless allowed), run ``suite`` as a tool call of its own, and judge the run."""
    command = suite.command if report is None else report.command(suite.command)
    arguments = json.dumps({"command": command, "timeout_s": bound})
    asked = json.dumps({"command": suite.command, "timeout_s": bound})  # the report aside
    call_id = {"done": "check-tests", "change": "change-tests", "start": "start-tests"}[purpose]
    call = rt.call_ids.claim(ToolCall(id=call_id, name="run_command", arguments=arguments))
    prepared = prepare(call, rt.tools)
    if isinstance(prepared, ToolResult):  # the session has no run_command tool
        return SuiteRun(status="skipped", detail=f"the tests were not run: {prepared.content}")
    title, ask_title = TITLES[purpose]
    rt.publish(
        ToolCallStarted(
            tool_call_id=call.id,
            name=call.name,
            title=f"{title}: {prepared.title}",
            tool_kind=prepared.tool.kind,
            raw_input=arguments,
        )
    )
    allowed = rt.tests_allowed == suite.command and not rt.permissions.denies(call)
    denied = "" if allowed else await _ask(rt, prepared, ask_title, asked)
    if denied:
        rt.tests_declined = denied
        _finished(rt, call.id, f"not run: {denied}", failed=True)
        return SuiteRun(status="skipped", detail=f"the tests were not run: {denied}")
    rt.tests_allowed = suite.command  # either prompt says it runs again in the session
    try:
        result = await _run_apart(rt, prepared, ctx)
    except BaseException:
        _finished(rt, call.id, "cancelled while running", failed=True)
        raise
    if isinstance(result, str):
        _finished(rt, call.id, result, failed=True)
        return SuiteRun(status="skipped", detail=f"the tests were not run: {result}")
    rt.cache.invalidate_all()  # tests may write files
    read = None if report is None else await anyio.to_thread.run_sync(report.read)
    ran = judge_output(suite, result, bound, read)
    counted = ", ".join(f"{n} {what}" for what, n in ran.counts.items())
    # The person reads the counts first ("2 failed, 4 passed"), then what the command said.
    shown = f"{counted}\n{result.content}" if counted else result.content
    _finished(rt, call.id, shown, failed=result.is_error)
    return ran


async def _ask(rt: Runtime, prepared: PreparedCall, title: str, asked: str) -> str:
    """The permission gate, as for the model's own commands: "" when allowed, else why not.

    ``asked``: the arguments the person and their rules judge (the test command without the
    report option Cadenza adds).
    """
    gate = rt.permissions
    if not gate.needs_asking(prepared.call.name):
        return ""
    request = PermissionRequest(
        tool_call_id=prepared.call.id,
        name=prepared.call.name,
        title=f"{title}: {prepared.title}",
        kind=prepared.tool.kind,
        raw_input=asked,
    )
    verdict, option = await gate.check(request)
    rt.publish(
        PermissionDecided(
            tool_call_id=prepared.call.id, name=prepared.call.name, verdict=verdict, option=option
        )
    )
    if verdict == "rejected" and option == "remembered":
        return "your permission rules refuse running them"
    return NOT_ALLOWED[verdict]


def unsaved_files(rt: Runtime) -> list[str]:
    """Workspace-relative names of the changed files whose disk text is not the session's."""
    names: list[str] = []
    for path, text in rt.written.items():
        try:
            data = read_workspace_file(rt.root, path, max_bytes=MAX_WRITTEN_BYTES)
            on_disk = None if data is None else decode_bytes(data).text
        except (WorkspaceFileError, ValueError):
            on_disk = None
        if on_disk != text:
            names.append(relative_name(rt.root, path))
    return names


async def _run_apart(rt: Runtime, prepared: PreparedCall, ctx: ToolContext) -> ToolResult | str:
    """Run the tests, never inside another session's command (``CommandWatch.editing``).

    Returns:
        The run's result, or why it did not run (the workspace stayed busy).
    """
    watch = rt.command_watch
    if watch is None:
        return await run(prepared, ctx)

    def waiting(holder: str) -> None:
        rt.publish(WorkspaceWaited(tool_call_id=prepared.call.id, holder=holder))

    async with watch.editing(waiting) as busy:
        return busy if busy is not None else await run(prepared, ctx)


def _finished(rt: Runtime, call_id: str, content: str, *, failed: bool) -> None:
    status: Literal["completed", "failed"] = "failed" if failed else "completed"
    rt.publish(ToolCallFinished(tool_call_id=call_id, content=content, status=status))
