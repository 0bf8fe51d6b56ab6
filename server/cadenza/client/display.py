"""What ``cadenza run`` shows: a live status line, the agent's text, tool calls, then a summary.

On a terminal the status line is a rich spinner with the latest progress report (``plan · step
3/25 · editing app.py``) and the agent's text streams above it; each movement of the workflow
starts with a line ``▶ movement plan``. When stdout is not a terminal (CI logs), the same
information is printed as plain lines, without colours or cursor movement.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from cadenza.client.edits import FileChange
from cadenza.client.events import (
    ClientEvent,
    EditRejected,
    EditWritten,
    PermissionAnswered,
    Progress,
    ServerMessage,
    UserAsked,
)
from cadenza.client.safe_text import line_markup, shorten, visible, visible_line, visible_markup
from cadenza.client.summary import diff_stat, unified_diff
from cadenza.schema.updates import (
    AgentMessageChunk,
    Candidates,
    Check,
    Compaction,
    Movement,
    Rules,
    SessionEnd,
    ToolCall,
    ToolCallUpdate,
)

_STEP = re.compile(r"(?:(?P<movement>\S+) · )?(?P<step>step \d+/\d+)(?: · (?P<rest>.+))?")
"""A step report: ``step 3/25``, or ``plan · step 3/25`` with the running movement, and what
follows (``writing a reply, 180 tokens · 1 min 56 s of 10 min``)."""
QUIET_REPORT_S = 30.0
"""Off a terminal, seconds between two lines of a step's progress (a CI log shows the run is
alive, and how far it got, without a line every few seconds)."""
REASON_CHARS = 120
NOTE_CHARS = 300  # characters shown of a running call's note (whom it waits for)
FAILURE_CHARS = 200  # characters shown of why a tool call failed
CHECK_CHARS = 400
"""Characters shown of what a done check found: its whole first line, in practice (the
terminal wraps it); only a runaway line is cut, at a word."""
SHOWN_TEXT_CHARS = 20_000
AGENT_TEXT = "the agent wrote:"
"""The line above each run of the agent's text (what follows is its words, not an action)."""
CHECK_LABELS = {
    "rename": "no use of the old name left",
    "changed": "something changed",
    "diagnostics": "no errors from the language server",
    "tests": "the tests",
}
"""What each done check is about, as the person reads it."""
DIFF_LINES_PER_FILE = 40
DIFF_LINE_CHARS = 1000
"""A longer diff line (minified code, say) is cut after this many characters."""
KIND_MARKS = {"created": "A", "modified": "M", "deleted": "D", "renamed": "R"}


@dataclass(frozen=True, kw_only=True)
class Marks:
    """The symbols used for results (ASCII fallbacks for consoles that are not UTF-8)."""

    ok: str
    failed: str
    edit: str
    dot: str
    movement: str

    @classmethod
    def for_console(cls, console: Console) -> Marks:
        """UTF-8 symbols when the console can encode them."""
        if console.encoding.lower().replace("-", "").startswith("utf"):
            return cls(ok="✓", failed="✗", edit="✎", dot="·", movement="▶")
        return cls(ok="ok", failed="FAILED", edit="*", dot="-", movement=">")


class SessionDisplay:
    """The observer of ``cadenza run``: renders events as they come.

    Args:
        console: Where to print (stdout).
        declined_note: Said after a question that was declined without asking, e.g.
            ``--yes``; None when the person is asked on the terminal.
    """

    def __init__(self, console: Console, *, declined_note: str | None = None) -> None:
        self.console = console
        self.declined_note = declined_note
        self.marks = Marks.for_console(console)
        self.live_enabled = console.is_terminal and not console.is_dumb_terminal
        self._live: Live | None = None
        self._spinner = Spinner("dots", text="starting the server")
        self._pending_text = ""
        self._activity = "starting the server"
        self._step_line = ""  # off a terminal: the step whose line was printed
        self._reported_at = 0.0  # off a terminal: when a progress line was printed
        self.clock = time.monotonic
        self._tools: dict[str, str] = {}
        self._refused: dict[str, str] = {}  # call id → why the person's side refused it
        self._in_text = False  # the last line printed is the agent's text
        self.streamed_text = False
        self.shown_text = ""
        """The agent's text shown in this turn (its end, ``SHOWN_TEXT_CHARS`` at most)."""

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> SessionDisplay:
        if self.live_enabled:
            self._live = Live(
                self._renderable(), console=self.console, transient=True, refresh_per_second=10
            )
            self._live.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.flush_text()
        if self._live is not None:
            self._live.stop()
            self._live = None

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Suspend the live status line (while a prompt owns the terminal)."""
        self.flush_text()
        live = self._live
        if live is not None:
            live.stop()
        try:
            yield
        finally:
            if live is not None:
                live.start()

    # -- events ------------------------------------------------------------------------------

    def __call__(self, event: ClientEvent) -> None:
        """Render one event."""
        if isinstance(event, AgentMessageChunk):
            self._agent_text(event.content.text)
        elif isinstance(event, ToolCall):
            self._tool_call(event)
        elif isinstance(event, ToolCallUpdate):
            self._tool_result(event)
        elif isinstance(event, Movement):
            self._movement(event)
        elif isinstance(event, Progress):
            self._progress(event)
        elif isinstance(event, SessionEnd):
            self.flush_text()
        else:
            self._note(event)

    def _note(self, event: ClientEvent) -> None:
        if isinstance(event, EditWritten):
            for change in event.changes:
                self._line(f"  [dim]{self.marks.edit} {line_markup(_change_label(change))}[/dim]")
        elif isinstance(event, EditRejected):
            self._line(
                f"  [yellow]{self.marks.failed} edit refused: {line_markup(event.reason)}[/]"
            )
        elif isinstance(event, UserAsked):
            self._asked(event)
        elif isinstance(event, PermissionAnswered):
            self._permission(event)
        elif isinstance(event, Compaction | Candidates):
            self._line(f"[dim]{self.marks.dot} {line_markup(_loop_note(event))}[/dim]")
        elif isinstance(event, Check):
            self._check(event)
        elif isinstance(event, Rules) and event.files:
            cut = f" (cut to fit: {', '.join(event.truncated)})" if event.truncated else ""
            names = line_markup(", ".join(event.files) + cut)
            self._line(f"[dim]{self.marks.dot} project rules read: {names}[/dim]")
        elif isinstance(event, ServerMessage) and (event.shown or event.level == "error"):
            colour = {"error": "red", "warning": "yellow"}.get(event.level, "cyan")
            self._line(f"[{colour}]server {event.level}:[/] {line_markup(event.message)}")

    def _check(self, event: Check) -> None:
        """A done check: what it found, and whether the claim of done went back to the model."""
        lines = [line.strip() for line in event.detail.strip().splitlines() if line.strip()]
        found = line_markup(shorten(_one_line(lines), CHECK_CHARS)) if lines else ""
        head, mark = {"passed": ("green", self.marks.ok), "skipped": ("dim", self.marks.dot)}.get(
            event.status, ("yellow", self.marks.failed)
        )
        then = " [dim](sent back to the agent)[/dim]" if event.refused else ""
        label = CHECK_LABELS.get(event.name, event.name)
        skipped = " skipped" if event.status == "skipped" else ""
        self._line(
            f"[{head}]{mark} check{skipped}: {label}[/] [dim]{self.marks.dot} {found}[/dim]{then}"
        )

    def _agent_text(self, text: str) -> None:
        self.streamed_text = True
        self.shown_text = (self.shown_text + text)[-SHOWN_TEXT_CHARS:]
        self._pending_text += text
        *complete, self._pending_text = self._pending_text.split("\n")
        for line in complete:
            self._text_line(line)
        self._refresh()

    def flush_text(self) -> None:
        """Print the agent's text that has no line end yet."""
        if self._pending_text:
            text, self._pending_text = self._pending_text, ""
            self._text_line(text)
            self._refresh()

    def _text_line(self, line: str) -> None:
        """One line of the agent's text; its first line after other output is headed as such.

        What the model writes is text, never an action: a small model that writes a call as
        text (``complete(done, ...)``) must not read like the tool lines around it.
        """
        if not self._in_text:
            self._print(Text.from_markup(f"[dim]{self.marks.dot} {AGENT_TEXT}[/dim]"))
            self._in_text = True
        self._print(Text(visible(line)))

    def _tool_call(self, event: ToolCall) -> None:
        self.flush_text()
        self._tools[event.tool_call_id] = visible_line(event.title or "tool call")
        self._activity = visible_line(event.title or "")
        self._refresh()

    def _tool_result(self, event: ToolCallUpdate) -> None:
        if event.status not in ("completed", "failed"):
            note = event.text().strip()  # a running call's note: whom it waits for
            if event.status is None and note:
                shown = line_markup(shorten(note, NOTE_CHARS))
                self._line(f"  [yellow]{self.marks.dot} {shown}[/]")
            return
        title = self._tools.pop(event.tool_call_id, "tool call")
        summary = (event.summary or "").strip()
        if event.status == "completed" and summary:  # it changed nothing, say a write back
            self._line(f"[dim]{self.marks.dot} {line_markup(shorten(summary, FAILURE_CHARS))}[/]")
            return
        if event.status == "completed":
            self._line(f"[green]{self.marks.ok}[/] {line_markup(title)}")
            return
        refused = self._refused.pop(event.tool_call_id, None)
        reason = [line.strip() for line in event.text().strip().splitlines() if line.strip()]
        if summary:  # the result tells the model what to do next: the person reads what it was
            reason = [summary]
        if refused is not None:  # the model's text says "do not retry": the person reads why
            reason = [refused]
        shown = line_markup(shorten(_one_line(reason), FAILURE_CHARS)) if reason else ""
        detail = f" [dim]{self.marks.dot} {shown}[/dim]" if reason else ""
        self._line(f"[red]{self.marks.failed}[/] {line_markup(title)}{detail}")

    def _movement(self, event: Movement) -> None:
        if event.workflow == "default":  # one movement: its name would say nothing
            return
        reason = event.reason.strip().splitlines()[0] if event.reason.strip() else ""
        reason = shorten(reason, REASON_CHARS)
        detail = f" [dim]{self.marks.dot} {line_markup(reason)}[/dim]" if reason else ""
        self._line(
            f"[bold magenta]{self.marks.movement} movement {line_markup(event.movement)}[/]{detail}"
        )

    def _progress(self, event: Progress) -> None:
        message = event.message or event.title or ""
        if event.kind == "begin":
            self._activity = "thinking"
            self._line(f"[bold]{self.marks.dot} {line_markup(event.title or 'session')}[/bold]")
        elif event.kind == "report" and message:
            self._activity = message
            if (step := _STEP.fullmatch(message)) is not None and not self.live_enabled:
                self._quiet_report(step["step"], step["rest"] or "")
        self._refresh()

    def _quiet_report(self, step: str, rest: str) -> None:
        """Off a terminal: a line when a step starts, then its progress now and then."""
        now = self.clock()
        if step != self._step_line:  # the movement has its own line already
            self._step_line, self._reported_at = step, now
            self._line(f"[dim]{self.marks.dot} {line_markup(step)}[/dim]")
        elif rest and now - self._reported_at >= QUIET_REPORT_S and not self._pending_text:
            # Not in the middle of a line of the agent's text: it would be cut in two.
            self._reported_at = now
            self._line(f"[dim]  {self.marks.dot} {line_markup(rest)}[/dim]")

    def _asked(self, event: UserAsked) -> None:
        if event.answer is not None:
            self._line(
                f"[cyan]?[/] {visible_markup(event.question)} "
                f"[dim]→ {line_markup(event.answer)}[/dim]"
            )
            return
        note = self.declined_note or "no answer"
        self._line(f"[cyan]?[/] {visible_markup(event.question)} [yellow]→ declined ({note})[/]")

    def _permission(self, event: PermissionAnswered) -> None:
        call = event.tool or "a tool"
        if event.title and event.title != event.tool:
            call = f"{call} ({event.title})"
        question = f"[cyan]?[/] permission to call {line_markup(call)}"
        if event.refusal:  # the call's failure shows this, not the model's instruction
            self._refused[event.tool_call_id] = event.refusal
        if event.answer is not None:
            colour = "yellow" if event.refusal else "dim"
            answer = f"{event.answer} (your rule `{event.rule}`)" if event.rule else event.answer
            self._line(f"{question} [{colour}]→ {line_markup(answer)}[/]")
            return
        note = self.declined_note or "no answer"
        if self.declined_note and event.allow_rule:  # declined unasked: say how to allow it
            note = f"{note}; --allow '{event.allow_rule}' lets it run"
        self._line(f"{question} [yellow]→ declined ({line_markup(note)})[/]")

    # -- output ------------------------------------------------------------------------------

    def note(self, markup: str) -> None:
        """Print one line of rich markup above the status line."""
        self._line(markup)

    def _line(self, markup: str) -> None:
        self.flush_text()
        self._in_text = False
        self._print(Text.from_markup(markup))

    def _print(self, renderable: RenderableType) -> None:
        self.console.print(renderable, soft_wrap=True)

    def _renderable(self) -> RenderableType:
        # One line, cut at the terminal's width: a wrapped status leaves stray lines behind.
        status = Text(visible_line(self._activity), style="cyan", no_wrap=True, overflow="ellipsis")
        self._spinner.update(text=status)
        if self._pending_text:
            return Group(Text(visible(self._pending_text)), self._spinner)
        return self._spinner

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._renderable())


def _one_line(lines: list[str]) -> str:
    """What a check found, or why a call failed, in one line (``lines``: not blank, stripped).

    A first line that is all lead-in (``a check failed:``) says nothing alone: the line it
    leads to follows it. A lead-in to lines that are not shown (``… exit code 1). The end of
    their output:``) is left out.
    """
    line, rest = lines[0], lines[1:]
    if line.endswith(":") and rest and ". " not in line:
        line, rest = f"{line} {rest[0].lstrip('- ')}", rest[1:]
    said, sep, _lead_in = line.rpartition(". ")
    return f"{said}." if line.endswith(":") and rest and sep else line


def _loop_note(event: Compaction | Candidates) -> str:
    """What the agent loop did to its context, or which of several replies it kept."""
    if isinstance(event, Candidates):
        return event.line()
    return (
        f"context compacted: {event.messages_summarized} messages summarized, "
        f"{event.tokens_before} → {event.tokens_after} tokens"
    )


def _change_label(change: FileChange) -> str:
    if change.kind == "renamed" and change.old_path:
        return f"{visible_line(change.old_path)} → {visible_line(change.path)}"
    return visible_line(change.path)


def _packed(console: Console, parts: list[str], sep: str) -> list[str]:
    """``parts`` (markup) joined by ``sep`` into lines that fit the console.

    A narrow terminal breaks the line between parts only: a number keeps its unit (rich would
    break at any space, leaving "s" alone under "601.1").
    """
    lines: list[str] = []
    for part in parts:
        joined = f"{lines[-1]}{sep}{part}" if lines else part
        if lines and Text.from_markup(joined).cell_len <= console.width:
            lines[-1] = joined
        else:
            lines.append(part)
    return lines


def print_summary(
    console: Console,
    *,
    stop_reason: str,
    message: str,
    steps: int | None,
    wall_time: float,
    changes: tuple[FileChange, ...],
    show_message: bool,
    missing_info: str | None = None,
    why_no_default: str | None = None,
) -> None:
    """Print the end of a run: how it ended, steps, wall time, and each changed file's diff.

    Args:
        console: Where to print.
        stop_reason: The session's stop reason (or ``interrupted``).
        message: The final answer or the error.
        steps: Model requests made in the whole session (earlier turns too), if known.
        wall_time: Seconds the whole run took.
        changes: Files changed, one per path.
        show_message: Print ``message`` (False when its text was already streamed).
        missing_info: What the agent needs from the person (``needs_user_input``).
        why_no_default: Why it could not choose a default (``needs_user_input``).
    """
    marks = Marks.for_console(console)
    colour = _COLOURS.get(stop_reason, "yellow")
    console.print()
    if show_message and message:
        label = "error" if stop_reason == "error" else "message"
        console.print(f"[{colour}]{label}:[/] {visible_markup(message)}", soft_wrap=True)
    if missing_info:
        console.print(f"[{colour}]needs:[/] {visible_markup(missing_info)}", soft_wrap=True)
    if why_no_default:
        console.print(
            f"[{colour}]why no default:[/] {visible_markup(why_no_default)}", soft_wrap=True
        )
    said = ENDINGS.get(stop_reason, f"ended ({stop_reason})")
    plural = "" if steps == 1 else "s"
    parts = [f"[bold]{visible_markup(said)}[/]", f"{wall_time:.1f} s"]
    if steps is not None:
        parts.insert(1, f"{steps} step{plural} in the session")
    for line in _packed(console, parts, f" {marks.dot} "):
        console.print(line, style=colour, highlight=False)
    if not changes:
        console.print("no files changed")
        return
    console.print(f"files changed ({len(changes)}):")
    for change in changes:
        stat = diff_stat(change)
        console.print(
            f"  {KIND_MARKS[change.kind]} {line_markup(_change_label(change))}  "
            f"[green]+{stat.added}[/] [red]-{stat.removed}[/]",
            soft_wrap=True,
            highlight=False,
        )
    print_diffs(console, changes, max_lines=DIFF_LINES_PER_FILE)


def print_diffs(
    console: Console, changes: tuple[FileChange, ...], *, max_lines: int = DIFF_LINES_PER_FILE
) -> None:
    """Print each change's unified diff (coloured), at most ``max_lines`` lines per file.

    Each line is cut after ``DIFF_LINE_CHARS`` characters and made :func:`visible`.
    """
    for change in changes:
        console.print()
        for line in unified_diff(change, max_lines=max_lines):
            style = _diff_style(line)
            if len(line) > DIFF_LINE_CHARS:
                extra = len(line) - DIFF_LINE_CHARS
                line = f"{line[:DIFF_LINE_CHARS]}… {extra} more characters"
            console.print(Text(visible(line), style=style), soft_wrap=True)


ENDINGS = {
    "end_turn": "finished",
    "needs_user_input": "waiting for your answer",
    "waiting_human": "waiting for you to act in the browser",
    "failed": "not done",
    "aborted": "stopped: the agent could not go on",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
    "max_steps": "not finished: it reached its step or time limit",
    "error": "stopped by an error",
}
"""How a run ended, as the summary line says it (the stop reason stays in ``--output json``,
``--events`` and the exit status, for scripts)."""
_COLOURS = {"end_turn": "green", "error": "red", "failed": "red", "aborted": "red"}
"""Summary colour per stop reason; the others (waiting, bounded, cancelled) are yellow."""


def _diff_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return "cyan" if line.startswith("@@") else ""
