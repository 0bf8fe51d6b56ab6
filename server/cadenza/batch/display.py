"""The driver's live view (rich): counts, throughput, the tasks in flight; a table at the end.

On a terminal it is a ``Live`` panel redrawn a few times a second; elsewhere (CI logs) each
start, retry and result is one plain line, so a log shows the batch as it went.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from cadenza.batch.results import TaskResult
from cadenza.client.safe_text import visible, visible_markup

RUNNING_ROWS = 12
"""Tasks in flight listed in the live panel (the rest are counted)."""
_COLOURS = {"done": "green", "incomplete": "yellow", "failed": "red", "crashed": "red"}


class BatchDisplay:
    """Renders the batch's progress.

    Args:
        console: Where to draw.
        total: Tasks to run in this batch (after ``--resume`` skipped some).
    """

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = total
        self.running: dict[str, tuple[int, float]] = {}
        self.counts: dict[str, int] = {}
        self.retries = 0
        self._started = time.monotonic()
        self._live: Live | None = None
        self.live_enabled = console.is_terminal and not console.is_dumb_terminal

    def __enter__(self) -> BatchDisplay:
        self._started = time.monotonic()
        if self.live_enabled:
            self._live = Live(self._panel(), console=self.console, refresh_per_second=4)
            self._live.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._live is not None:
            self._live.update(self._panel())
            self._live.stop()
            self._live = None

    def started(self, task_id: str, attempt: int) -> None:
        """A task was handed to Ray."""
        self.running[task_id] = (attempt, time.monotonic())
        if not self.live_enabled:
            again = f" (attempt {attempt})" if attempt > 1 else ""
            self._plain(f"started {task_id}{again}")

    def retried(self, task_id: str, reason: str) -> None:
        """A task's worker died; it goes back to the queue."""
        self.running.pop(task_id, None)
        self.retries += 1
        self.note(
            f"[yellow]worker died[/] running {visible_markup(task_id)}: "
            f"{visible_markup(reason)}; retrying"
        )

    def finished(self, result: TaskResult) -> None:
        """A task's result was written."""
        self.running.pop(result.id, None)
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        colour = _COLOURS.get(result.status, "yellow")
        reason = result.stop_reason or result.error or ""
        self.note(
            f"[{colour}]{result.status}[/] {visible_markup(result.id)} "
            f"[dim]{visible_markup(reason[:120])} · {result.wall_time_s:.1f} s[/dim]"
        )

    def note(self, markup: str) -> None:
        """One line above the live panel (or in the log)."""
        self.console.print(Text.from_markup(markup), soft_wrap=True)
        self.tick()

    def tick(self) -> None:
        """Redraw the live panel."""
        if self._live is not None:
            self._live.update(self._panel())

    def _plain(self, line: str) -> None:
        self.console.print(Text(visible(line)), soft_wrap=True)

    def _throughput(self) -> float:
        elapsed = time.monotonic() - self._started
        return sum(self.counts.values()) / elapsed * 60 if elapsed > 0 else 0.0

    def _panel(self) -> RenderableType:
        done = sum(self.counts.values())
        counts = " · ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        head = Text.from_markup(
            f"[bold]{done}/{self.total}[/] finished · running {len(self.running)} · "
            f"{counts or 'none yet'} · retries {self.retries} · "
            f"{self._throughput():.1f} tasks/min"
        )
        table = Table(box=None, show_header=False, pad_edge=False)
        now = time.monotonic()
        for task_id, (attempt, since) in list(self.running.items())[:RUNNING_ROWS]:
            again = f"attempt {attempt}" if attempt > 1 else ""
            table.add_row(
                "[cyan]running[/]", visible_markup(task_id), f"{now - since:.0f} s", again
            )
        hidden = len(self.running) - RUNNING_ROWS
        rows: list[RenderableType] = [head, table]
        if hidden > 0:
            rows.append(Text(f"… {hidden} more running"))
        return Group(*rows)


def summary_table(console: Console, results: Iterable[TaskResult], wall: float) -> None:
    """The table printed when the batch is over: one row per task written in this run."""
    table = Table(title=f"cadenza batch · {wall:.1f} s")
    for column in ("id", "status", "stop reason", "steps", "files", "time", "tries"):
        table.add_column(column)
    for r in results:
        colour = _COLOURS.get(r.status, "yellow")
        table.add_row(
            visible_markup(r.id),
            f"[{colour}]{r.status}[/]",
            visible_markup(r.stop_reason or (r.error or "")[:60]),
            "" if r.steps is None else str(r.steps),
            str(len(r.files)),
            f"{r.wall_time_s:.1f} s",
            str(r.attempts),
        )
    console.print(table)
