"""``cadenza run``: one agent task on a workspace, headless, with a live display and a summary.

``--interactive`` (``-i``): after each turn that ends well (``end_turn``), the person's next message
from the terminal goes to the same session (as ``--continue``; :mod:`cadenza.client.followups`);
``--continue ID`` sends the task as the next turn of the session ``ID`` (from this or an earlier
run; it goes on in the same conversation, ``cadenza.promptSession``), with ``--model`` and
``--workflow`` switching them from this turn on. ``--workflow NAME`` runs a workflow other
than ``default`` (e.g. ``plan-implement-review``);
``--events FILE`` appends every request and notification the server sends, as JSON lines
(:mod:`cadenza.client.eventlog`), for scripts and tests; ``--review confirm`` shows each change
as a unified diff and asks y/n before it is written (``--yes`` accepts them all; without a
terminal they are declined). ``cadenza undo SESSION_ID`` puts back the files a session changed.
``--allow TOOL`` / ``--deny TOOL`` / ``--allow-all`` answer that run's permission requests
(``cadenza/requestPermission``, by the tool's name: :mod:`cadenza.client.permissions`; shown
in the run's header); ``--output json`` prints one
JSON object at the end and nothing else on stdout (:mod:`cadenza.client.report`).

Exit status (also in ``cadenza run --help``), by the session's stop reason:

- 0: ``end_turn``: the task is done (a final answer, or ``complete(done)``);
- 1: ``error``, ``failed`` (the agent gave up: ``complete(failed)``) or ``aborted`` (an
  ``ABORT`` exit, e.g. context overflow); also when the server could not be started, refused
  the session (an unknown workflow, say) or ran away;
- 3: incomplete: ``max_steps``, or the session waits for the person (``needs_user_input``,
  ``waiting_human``);
- 130: interrupted with Ctrl-C (the session is cancelled first, then the server shut down);
- 143: stopped by SIGTERM (a CI job's timeout, ``kill``): the same cancel; with ``--output
  json`` the object is still printed, with ``stop_reason`` ``cancelled``.

2: a bad command line (argparse's status; also contradictory ``--allow``/``--deny``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from cadenza.client.display import SessionDisplay, print_summary
from cadenza.client.edits import FileChange
from cadenza.client.errors import ClientError
from cadenza.client.events import ClientEvent, Observer
from cadenza.client.followups import LineReader, ask
from cadenza.client.options import ClientOptions, usage_problem
from cadenza.client.outcome import RunResult
from cadenza.client.permissions import PermissionPolicy, PolicyError
from cadenza.client.prompts import DecliningPrompter, Prompter, TerminalPrompter
from cadenza.client.report import PermissionPrompt, permission_prompt, run_report
from cadenza.client.safe_text import visible_line, visible_markup
from cadenza.client.session import HeadlessClient

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
"""128 + SIGTERM, as a shell reports a process the signal ended."""
CANCEL_GRACE = 15.0
"""Seconds to wait for ``session_end`` after ``cadenza.cancelSession`` before giving up."""

INCOMPLETE_REASONS = frozenset({"max_steps", "needs_user_input", "waiting_human"})


def exit_status(stop_reason: str) -> int:
    """The process exit status for a session's stop reason (see the module docstring).

    Unknown stop reasons (from a newer server) count as errors.
    """
    if stop_reason == "end_turn":
        return EXIT_OK
    if stop_reason in INCOMPLETE_REASONS:
        return EXIT_INCOMPLETE
    return EXIT_ERROR


def run_main(
    args: argparse.Namespace,
    *,
    before_start: Callable[[argparse.Namespace], str | None] | None = None,
) -> int:
    """Run ``cadenza run`` with parsed arguments; returns the exit status.

    Args:
        args: ``task``, ``workspace``, ``model``, ``workflow``, ``events``, ``yes``,
            ``max_steps``, ``review``, ``allow``, ``deny``, ``allow_all``, ``output`` from
            the parser in :mod:`cadenza.cli`.
        before_start: Says why the run cannot start (e.g. its local model is not pulled),
            asked once the command line and the workspace are known good; its answer is the
            error (in the JSON object too, with ``--output json``), and no server starts.
    """
    _quiet_pygls()
    errors = Console(stderr=True, highlight=False)
    try:
        policy = PermissionPolicy.from_args(args)
    except PolicyError as exc:
        errors.print(f"cadenza {args.command}: error: {exc}", markup=False, soft_wrap=True)
        return EXIT_USAGE
    json_output = getattr(args, "output", "text") == "json"
    if problem := usage_problem(args):
        errors.print(f"cadenza {args.command}: error: {problem}", markup=False, soft_wrap=True)
        return EXIT_USAGE
    if not Path(args.workspace).is_dir():  # said before the header, and before a server starts
        errors.print(
            f"error: the workspace {args.workspace} is not a folder", markup=False, soft_wrap=True
        )
        return EXIT_ERROR
    # With --output json, stdout carries the report alone: the display goes to stderr.
    console = errors if json_output else Console(highlight=False)
    interactive = not args.yes and sys.stdin.isatty()
    declined = None if interactive else ("--yes" if args.yes else "stdin is not a terminal")
    options = ClientOptions(
        workspace=Path(args.workspace),
        model=args.model,
        workflow=args.workflow,
        max_steps=args.max_steps,
        time_budget_s=getattr(args, "time_budget", None),
        events_path=Path(args.events) if args.events else None,
        review=getattr(args, "review", None),
        trust_workspace=bool(getattr(args, "trust_workspace", False)),
        allow=tuple(sorted(policy.allow)),
        deny=tuple(sorted(policy.deny)),
    )
    reply_to = getattr(args, "session_id", None)
    run = _Run(
        console=console,
        errors=errors,
        options=options,
        task=args.task,
        reply_to=reply_to,
        policy=policy,
        json_output=json_output,
        continue_id=getattr(args, "continue_id", None),
        interactive=getattr(args, "interactive", False),
    )
    if before_start is not None and (problem := before_start(args)):
        errors.print(f"error: {problem}", markup=False, soft_wrap=True)
        run.report(None, EXIT_ERROR, 0.0, error=problem)
        return EXIT_ERROR
    display = SessionDisplay(console, declined_note=declined)
    prompter: Prompter = (
        TerminalPrompter(console, pause=display.paused, permissions=policy)
        if interactive
        else DecliningPrompter(accept_edits=args.yes, permissions=policy)
    )
    run.header("asked on the terminal" if declined is None else f"declined ({declined})")
    started = time.monotonic()
    # Until the event loop handles SIGTERM itself, it stops the run like Ctrl-C.
    previous = signal.signal(signal.SIGTERM, run.on_sigterm)
    try:
        return asyncio.run(run.main(display, prompter))
    except KeyboardInterrupt:  # a signal before the loop's own handler was installed
        errors.print("interrupted")
        status = EXIT_TERMINATED if run.terminated else EXIT_INTERRUPTED
        run.report(None, status, time.monotonic() - started)
        return status
    finally:
        signal.signal(signal.SIGTERM, previous)


def _quiet_pygls() -> None:
    """Keep pygls's own error logs (with tracebacks) off the terminal.

    A response that arrives for a request given up after Ctrl-C made pygls log a traceback;
    the client reports the protocol errors that matter itself.
    """
    logging.getLogger("pygls").setLevel(logging.CRITICAL)


@dataclass(kw_only=True)
class _Run:
    console: Console
    errors: Console
    options: ClientOptions
    task: str
    reply_to: str | None = None
    """``cadenza reply``: the waiting session that ``task`` answers."""
    policy: PermissionPolicy = field(default_factory=PermissionPolicy)
    json_output: bool = False
    """``--output json``: :meth:`report` prints the run's JSON object on stdout."""
    continue_id: str | None = None
    """``cadenza run --continue``: the session whose next turn ``task`` is."""
    interrupted: bool = False
    terminated: bool = False
    """SIGTERM arrived: the run stops as after Ctrl-C, with status 143."""
    cancel_requested: bool = False
    prompts: list[PermissionPrompt] = field(default_factory=list)
    """The run's permission prompts and their answers (for ``--output json``)."""
    interactive: bool = False
    """``--interactive``: after each turn that ends well, the next message from the terminal."""
    lines: LineReader = field(default_factory=LineReader)

    def header(self, others: str) -> None:
        """The run's header: how its permission prompts are answered."""
        colour = "red" if self.policy.allow_all else "cyan"
        self.console.print(
            f"[{colour}]permissions:[/] {visible_markup(self.policy.describe())}"
            f" · other prompts: {visible_markup(others)}",
            soft_wrap=True,
        )
        if self.options.trust_workspace:
            note = "trusted for this run: its cadenza.toml may choose the model and programs"
            self.console.print(f"[yellow]workspace:[/] {note}", soft_wrap=True)

    async def main(self, display: SessionDisplay, prompter: Prompter) -> int:
        """Start the server, run the session (and, interactive, its follow-ups), shut down."""
        started = time.monotonic()
        client = HeadlessClient(self.options, observer=self._observer(display), prompter=prompter)
        try:
            run, error, changes = await self._turn(client, display, self._drive(client))
            while run is not None and self._goes_on(run, error):
                text = await self._ask()
                if text is None:
                    break
                follow_up = self._follow_up(client, run.session_id, text)
                run, error, changes = await self._turn(client, display, follow_up)
        finally:
            await client.close()
        status = self._status(run, error)
        wall = time.monotonic() - started
        self.report(run, status, wall, client=client, error=error, changes=changes)
        return status

    async def _turn(
        self, client: HeadlessClient, display: SessionDisplay, work: Coroutine[Any, Any, RunResult]
    ) -> tuple[RunResult | None, str | None, tuple[FileChange, ...]]:
        """Run one turn under the live display and print its summary."""
        started = time.monotonic()
        drive = asyncio.create_task(work)
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self._on_interrupt, client, drive, display)
            loop.add_signal_handler(signal.SIGTERM, self._on_terminate, client, drive, display)
        run: RunResult | None = None
        error: str | None = None
        try:
            with display:
                run = await drive
        except asyncio.CancelledError:
            pass  # a second Ctrl-C, or Ctrl-C before the session started
        except ClientError as exc:
            error = str(exc)
            self.errors.print(f"[red]error:[/] {visible_markup(error)}", soft_wrap=True)
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
                loop.remove_signal_handler(signal.SIGTERM)
        changes = await client.final_changes() if run is None else run.changes
        if error is None:
            self._summary(run, changes, time.monotonic() - started, display.shown_text)
        display.streamed_text, display.shown_text = False, ""
        return run, error, changes

    def _goes_on(self, run: RunResult, error: str | None) -> bool:
        """``--interactive``: a turn that ended well is followed by the person's next message."""
        ended_well = error is None and run.outcome.stop_reason == "end_turn"
        return self.interactive and ended_well and not (self.interrupted or self.terminated)

    async def _ask(self) -> str | None:
        """The next message, or None (empty line, EOF, or Ctrl-C: the run ends)."""
        text, stop = await ask(self.console, self.lines)
        self.interrupted = self.interrupted or stop is not None
        self.terminated = self.terminated or stop == signal.SIGTERM
        return text

    async def _follow_up(self, client: HeadlessClient, session_id: str, text: str) -> RunResult:
        await client.prompt_session(session_id, text)
        return await client.wait()

    def on_sigterm(self, signum: int, frame: object) -> None:
        """SIGTERM before the event loop handles it: stop as Ctrl-C does."""
        self.terminated = True
        raise KeyboardInterrupt

    def _observer(self, display: SessionDisplay) -> Observer:
        """The display, after noting the answers to permission prompts."""

        def observe(event: ClientEvent) -> None:
            prompt = permission_prompt(event)
            if prompt is not None:
                self.prompts.append(prompt)
            display(event)

        return observe

    def _status(self, run: RunResult | None, error: str | None) -> int:
        if error is not None:
            return EXIT_ERROR
        if self.terminated:
            return EXIT_TERMINATED
        if self.interrupted:
            return EXIT_INTERRUPTED
        return exit_status(run.outcome.stop_reason) if run else EXIT_ERROR

    def report(
        self,
        run: RunResult | None,
        status: int,
        wall: float,
        *,
        client: HeadlessClient | None = None,
        error: str | None = None,
        changes: tuple[FileChange, ...] = (),
    ) -> None:
        """With ``--output json``: print the run's one JSON object on stdout."""
        if not self.json_output:
            return
        report = run_report(
            run,
            exit_status=status,
            wall_time=wall,
            policy=self.policy,
            changes=changes,
            session_id=client.session_id if client is not None else None,
            error=error,
            prompts=self.prompts,
            stopped="cancelled" if self.terminated else "interrupted",
        )
        sys.stdout.write(report.model_dump_json() + "\n")
        sys.stdout.flush()

    async def _drive(self, client: HeadlessClient) -> RunResult:
        await client.start()
        if self.reply_to is not None:
            await client.reply_session(self.reply_to, self.task)
        elif self.continue_id is not None:
            options = self.options
            await client.prompt_session(
                self.continue_id, self.task, model=options.model, workflow=options.workflow
            )
        else:
            await client.start_session(self.task)
        return await client.wait()

    def _on_terminate(
        self, client: HeadlessClient, drive: asyncio.Task[RunResult], display: SessionDisplay
    ) -> None:
        """SIGTERM: cancel the session as the first Ctrl-C does (a second one quits now)."""
        self.terminated = True
        self._on_interrupt(client, drive, display)

    def _on_interrupt(
        self, client: HeadlessClient, drive: asyncio.Task[RunResult], display: SessionDisplay
    ) -> None:
        """First Ctrl-C of a running session: cancel it; otherwise stop waiting at once."""
        self.interrupted = True
        if self.cancel_requested or drive.done() or client.session_id is None:
            drive.cancel()
            return
        self.cancel_requested = True
        why = "terminated" if self.terminated else "interrupted"
        display.note(f"[yellow]{why}: cancelling the session (Ctrl-C again to quit now)[/]")
        asyncio.get_running_loop().create_task(self._cancel(client, drive))

    async def _cancel(self, client: HeadlessClient, drive: asyncio.Task[RunResult]) -> None:
        try:
            await client.cancel()
        except ClientError as exc:
            self.errors.print(f"[red]error:[/] {visible_markup(str(exc))}")
            drive.cancel()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(drive), CANCEL_GRACE)
        if not drive.done():
            drive.cancel()

    def _summary(
        self,
        run: RunResult | None,
        changes: tuple[FileChange, ...],
        wall: float,
        streamed: str,
    ) -> None:
        if run is None:
            print_summary(
                self.console,
                stop_reason="cancelled" if self.terminated else "interrupted",
                message="",
                steps=None,
                wall_time=wall,
                changes=changes,
                show_message=False,
            )
            return
        print_summary(
            self.console,
            stop_reason=run.outcome.stop_reason,
            message=run.outcome.message,
            steps=run.outcome.steps,
            wall_time=wall,
            changes=run.changes,
            # Shown unless the person already read it as streamed text (a hosted model's
            # final answer); text streamed earlier in the turn does not stand for it.
            show_message=run.outcome.stop_reason != "end_turn"
            or " ".join(run.outcome.message.split()) not in " ".join(streamed.split()),
            missing_info=run.outcome.missing_info,
            why_no_default=run.outcome.why_no_default,
        )
        sid = run.session_id
        waits = run.outcome.waiting
        hints = [f"undo these changes: cadenza undo {sid}"] if run.changes else []
        if waits:
            hints.append(f'the session waits for you: cadenza reply {sid} "YOUR ANSWER"')
        elif not self.interactive:
            hints.append(f'follow up: cadenza run --continue {sid} "YOUR NEXT PROMPT"')
        for hint in hints:  # one line each, so a command can be copied whole
            self.console.print(visible_line(hint), soft_wrap=True, markup=False)
