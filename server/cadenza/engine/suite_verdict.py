"""The verdict on one run of a workspace's tests, from its exit status, output and report.

The model reads the last ``TAIL_LINES`` lines of a failing run (pytest, npm and go all end
with the failures' summary). A command that cannot start (exit 126/127), a runner that is not
installed, or a run that found no test (pytest's exit status 5; a run that exited 0 and printed
nothing, or counts that name no test that ran) gives no verdict: ``skipped`` with
``cannot_run``, which the done check never takes for passing tests (the work may be the cause).

When Cadenza built the pytest command, the run comes with pytest's own report
(``engine.junit``), and a run "passes" only when that report agrees: some test ran, none
failed or erred. A run whose output says otherwise than its report, or that ended before
pytest wrote one (exit 0, or "no test found"), fails, and says why.
"""

from __future__ import annotations

from cadenza.engine.junit import NO_REPORT, Junit
from cadenza.engine.test_report import read_report
from cadenza.engine.testsuite import SuiteCommand, SuiteRun
from cadenza.tools.base import ToolResult

TAIL_LINES = 40
"""Lines of the test output the model reads (the end of it)."""

LINE_CHARS = 240
"""Longest line the model reads; longer ones are cut."""

CANNOT_RUN = frozenset({"exit code 126", "exit code 127"})
"""Status lines of a shell that could not find or start the command."""


def judge_output(
    suite: SuiteCommand, result: ToolResult, timeout_s: float, report: Junit | str | None = None
) -> SuiteRun:
    """The verdict on one run of ``suite`` from ``run_command``'s result (status line first).

    ``report``: pytest's report of the run (``engine.junit``: its counts, or why there are
    none) when the command asked for one; None: the exit status and the output decide. With a
    report, a run passes only when pytest's report agrees: some test ran, none failed.
    """
    status, _, output = result.content.partition("\n")
    shown = f"`{suite.command}`"
    tail = output_tail(output)
    junit = report if isinstance(report, Junit) else None
    if report is not None and (doubt := _doubt(suite, status, output, report)):
        return SuiteRun(
            status="failed",
            detail=f"{doubt} ({shown}, {status}). The end of their output:\n{tail}",
            output=output,
            junit=junit,
            doubt=doubt,
        )
    if status in CANNOT_RUN or _runner_missing(suite, output, report):
        return SuiteRun(
            status="skipped",
            detail=f"the test command {shown} could not run: {last_line(tail)}",
            cannot_run=True,
        )
    if suite.no_tests_exit is not None and status == f"exit code {suite.no_tests_exit}":
        return SuiteRun(
            status="skipped", detail=f"{shown} found no test to run", cannot_run=True, junit=junit
        )
    if not result.is_error and (silent := _no_tests_reported(suite, output, junit)):
        return SuiteRun(
            status="skipped",
            detail=f"the test command {shown} ran ({status}) but {silent}",
            output=output,
            cannot_run=True,
            junit=junit,
        )
    if not result.is_error:
        # Counts read (pytest's, or a runner's that names them the same way) say the tests
        # pass; another runner's output only says how the command exited.
        said = (
            f"the tests pass ({shown}: {last_line(tail)})"
            if junit is not None or read_report(output).counts
            else f"the test command passed ({shown} exited 0: {last_line(tail)})"
        )
        return SuiteRun(status="passed", detail=said, output=output, junit=junit)
    if status.startswith("timed out"):
        return SuiteRun(
            status="failed",
            detail=(
                f"the tests did not finish within {timeout_s:g} s ({shown}) and were stopped; "
                f"something may loop forever or wait. The end of their output:\n{tail}"
            ),
            output=output,
            timed_out=True,
        )
    return SuiteRun(
        status="failed",
        detail=f"the tests fail ({shown}, {status}). The end of their output:\n{tail}",
        output=output,
        junit=junit,
    )


EARLY_END = "code that ends the process itself (such as os._exit) does that"
FORGED = "code that sets the exit status or prints a result itself does that"


def _doubt(suite: SuiteCommand, status: str, output: str, report: Junit | str) -> str:
    """Why the run's exit status and output cannot be taken at their word; "" when they can.

    The code under test runs in pytest's own process: it can print a summary and end the
    process with any status (an ``atexit`` hook, ``os._exit``), before or after pytest wrote
    its report. pytest writes the report at its end, also when it found no test: a run that
    exited 0 or "found no test" without one ended early; one whose report counts tests that
    ran, or failures, did not end as its status says. This raises the bar; the same code
    could write a report too.
    """
    ok, none_found = status == "exit code 0", status == f"exit code {suite.no_tests_exit}"
    if isinstance(report, str):
        if not (ok or none_found):
            return ""
        return f"{report}: {EARLY_END}" if report == NO_REPORT else report
    if report.skipped_in_code:
        return (
            f"a test was skipped from {report.skipped_in_code}, code that is not a test: "
            "a skip belongs in the tests, so the run does not pass"
        )
    said = read_report(output).counts
    contradicted = (
        status in CANNOT_RUN
        or (none_found and report.ran > 0)
        or (ok and (report.failed > 0 or report.errors > 0))
        or (ok and not report.ran and any(said.get(what) for what in RAN))
    )
    if not contradicted:
        return ""
    return f"the output and pytest's report disagree (the report counts {report.summary}): {FORGED}"


def _runner_missing(suite: SuiteCommand, output: str, report: Junit | str | None) -> bool:
    """Whether the output says the runner is not installed.

    With a report asked for: only when none came and the output's last line says so (a
    missing pytest prints that alone); a report means pytest ran.
    """
    if suite.missing is None or suite.missing not in output or isinstance(report, Junit):
        return False
    return report is None or last_line(output).endswith(suite.missing)


def _no_tests_reported(suite: SuiteCommand, output: str, junit: Junit | None = None) -> str:
    """Why a run that exited 0 does not show tests passing, or "" when it does.

    A run that printed nothing, or whose counts (pytest's last line) name no test that ran
    (``3 skipped``), reported no test; so did a detected pytest run whose output has no counts
    at all (a plugin or an option swallowed them), and a ``go test`` run of packages without
    test files. Another runner's output is not read: its exit status stands. pytest's report,
    when read, says it instead of the output.
    """
    if junit is not None:
        return "" if junit.ran else f"reported no test that ran ({junit.summary})"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return "printed nothing: it reported no tests"
    counts = read_report(output).counts
    if counts and not any(counts.get(what) for what in RAN):
        return f"reported no test that ran ({read_report(output).summary})"
    if suite.source == "pytest" and not counts:
        return f"reported no tests ({last_line(output)})"
    if suite.source == "go.mod" and all(line.endswith(GO_NO_TESTS) for line in lines):
        return "reported no tests: no package has test files"
    return ""


RAN = ("passed", "failed", "error", "errors", "xfailed", "xpassed")
"""pytest's counts of tests that ran (skipped and deselected ones did not)."""
GO_NO_TESTS = "[no test files]"
"""The end of ``go test``'s line for a package without tests."""


def output_tail(output: str) -> str:
    """The last ``TAIL_LINES`` non-blank-ended lines of ``output``, each cut to ``LINE_CHARS``."""
    lines = output.rstrip().splitlines()[-TAIL_LINES:]
    return "\n".join(line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…" for line in lines)


def last_line(text: str) -> str:
    """The last non-blank line of ``text`` (a runner's summary), or "no output"."""
    rows = [row.strip() for row in text.splitlines() if row.strip()]
    return rows[-1] if rows else "no output"
