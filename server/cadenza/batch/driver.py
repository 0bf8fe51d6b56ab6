"""The driver of ``cadenza batch``: fan the tasks out as Ray tasks, collect, write, summarize.

At most ``max_concurrency`` tasks are in flight; each result is written as it arrives
(:func:`~cadenza.batch.results.write_task`), so a batch stopped half-way keeps what finished
and ``--resume`` runs only the rest. A task whose worker died is submitted again, up to
``retry_crashed`` times; a session that failed is a result like any other, never retried.
Ctrl-C cancels the tasks in flight (their sessions are cancelled and their servers shut
down), waits ``CANCEL_GRACE_S`` for them, then kills what is left, and writes only the
summary: no result of a cancelled task is ever written.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from cadenza.batch import raylib
from cadenza.batch.display import BatchDisplay
from cadenza.batch.model_servers import DEFAULT_SLOTS, SlotTable
from cadenza.batch.results import (
    SUMMARY,
    TaskOutput,
    TaskResult,
    redacted_result,
    write_atomic,
    write_task,
)
from cadenza.batch.tasks import BadLine, TaskSpec
from cadenza.batch.worker import WorkerSettings
from cadenza.secrets import redact

POLL_S = 0.5
"""How often the driver looks for finished tasks (and notices Ctrl-C), seconds."""
CANCEL_GRACE_S = 20.0
"""Seconds cancelled tasks get to stop their sessions before their workers are killed."""


@dataclass(frozen=True, kw_only=True)
class BatchPlan:
    """What to run and how."""

    tasks: tuple[TaskSpec, ...]
    out: Path
    settings: WorkerSettings
    max_concurrency: int
    retry_crashed: int = 1
    skipped_lines: tuple[BadLine, ...] = ()
    resumed: tuple[str, ...] = ()
    """Ids skipped because ``--resume`` found their result."""
    model_slots: int = DEFAULT_SLOTS
    """Sessions each node's shared llama-server serves at once (``--model-slots``)."""
    slots: SlotTable = field(default_factory=SlotTable)
    """The nodes' shared model servers: a task of a served model waits for a free slot."""


class SummaryEntry(BaseModel):
    """One task in ``summary.json``."""

    id: str
    status: str
    stop_reason: str | None
    attempts: int
    wall_time_s: float
    session_time_s: float | None
    error: str | None


class BatchSummary(BaseModel):
    """``DIR/summary.json``."""

    started_at: str
    wall_time_s: float
    ray_init_s: float
    max_concurrency: int
    interrupted: bool
    counts: dict[str, int]
    throughput_per_min: float
    task_time_sum_s: float
    """Sum of the workers' times per task (checkout, server, session, patch)."""
    session_time_sum_s: float
    tasks: list[SummaryEntry]
    skipped_lines: list[dict[str, int | str]]
    resumed: list[str]


@dataclass(kw_only=True)
class _Flight:
    spec: TaskSpec
    attempt: int
    node: str | None = None
    """The node whose shared model server's slot the task holds."""


@dataclass(kw_only=True)
class BatchRun:
    """One run of a plan; :meth:`run` returns the summary (also written to ``summary.json``)."""

    plan: BatchPlan
    display: BatchDisplay
    ray_init_s: float = 0.0
    results: list[TaskResult] = field(default_factory=list)
    interrupted: bool = False
    _started: float = 0.0
    _inflight: dict[int, tuple[raylib.Ref, _Flight]] = field(default_factory=dict)

    def run(self) -> BatchSummary:
        """Run every task; on Ctrl-C, cancel cleanly, then re-raise ``KeyboardInterrupt``."""
        self._started = time.monotonic()
        queue = deque(_Flight(spec=spec, attempt=1) for spec in self.plan.tasks)
        try:
            with self.display:
                while queue or self._inflight:
                    while queue and len(self._inflight) < self.plan.max_concurrency:
                        if not self._submit(queue[0]):
                            break  # its model's slots are all busy: wait for one
                        queue.popleft()
                    for ref in raylib.wait([r for r, _ in self._inflight.values()], POLL_S):
                        self._collect(ref, queue)
                    self.display.tick()
        except KeyboardInterrupt:
            self.interrupted = True
            self._cancel_inflight()
            self._write_summary()
            raise
        return self._write_summary()

    def _submit(self, flight: _Flight) -> bool:
        """Submit ``flight``; False when it needs a model server slot and none is free."""
        model = self._model(flight)
        if model is not None:
            flight.node = self.plan.slots.take(model)
            if flight.node is None:
                return False
        ref = raylib.submit(flight.spec, self.plan.settings, flight.attempt, flight.node)
        self._inflight[id(ref)] = (ref, flight)
        self.display.started(flight.spec.id, flight.attempt)
        return True

    def _model(self, flight: _Flight) -> str | None:
        """The task's model when a shared model server serves it, else None."""
        model = flight.spec.model or self.plan.settings.model
        return model if self.plan.slots.serves(model) else None

    def _collect(self, ref: raylib.Ref, queue: deque[_Flight]) -> None:
        _, flight = self._inflight.pop(id(ref))
        model = self._model(flight)
        if model is not None and flight.node is not None:
            self.plan.slots.release(model, flight.node)
        try:
            output = raylib.get(ref)
        except raylib.WorkerDied as exc:
            if flight.attempt <= self.plan.retry_crashed:
                self.display.retried(flight.spec.id, redact(str(exc)))
                queue.appendleft(_Flight(spec=flight.spec, attempt=flight.attempt + 1))
                return
            output = _lost(flight, "crashed", f"the worker died: {exc}")
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # a bug in the worker: a result, the batch goes on
            output = _lost(flight, "failed", f"the worker failed: {type(exc).__name__}: {exc}")
        write_task(self.plan.out, output)
        result = redacted_result(output.result)  # for the summary and the printed table
        self.results.append(result)
        self.display.finished(result)

    def _cancel_inflight(self) -> None:
        """Cancel the tasks in flight; kill the workers of those that do not stop in time."""
        refs = [r for r, _ in self._inflight.values()]
        self.display.note(f"interrupted: cancelling {len(refs)} running task(s)")
        raylib.cancel(refs, force=False)
        try:
            left = raylib.settle(refs, CANCEL_GRACE_S)
        except KeyboardInterrupt:
            left = refs
        raylib.cancel(left, force=True)
        self._inflight.clear()

    def _write_summary(self) -> BatchSummary:
        summary = summarize(
            self.plan,
            self.results,
            wall=time.monotonic() - self._started,
            ray_init_s=self.ray_init_s,
            interrupted=self.interrupted,
        )
        write_atomic(self.plan.out / SUMMARY, summary.model_dump_json(indent=2) + "\n")
        return summary


def _lost(flight: _Flight, status: str, error: str) -> TaskOutput:
    spec = flight.spec
    result = TaskResult.model_validate(
        {
            "id": spec.id,
            "status": status,
            "error": error,
            "attempts": flight.attempt,
            "repo": spec.repo,
            "ref": spec.ref,
            "task": spec.task,
            "model": spec.model,
            "workflow": spec.workflow,
        }
    )
    return TaskOutput(result=result)


def summarize(
    plan: BatchPlan,
    results: list[TaskResult],
    *,
    wall: float,
    ray_init_s: float,
    interrupted: bool,
) -> BatchSummary:
    """The batch's summary from the results written in this run."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    finished = {r.id for r in results}
    counts["cancelled"] = sum(1 for spec in plan.tasks if spec.id not in finished)
    return BatchSummary(
        started_at=datetime.fromtimestamp(time.time() - wall, UTC).isoformat(timespec="seconds"),
        wall_time_s=round(wall, 3),
        ray_init_s=round(ray_init_s, 3),
        max_concurrency=plan.max_concurrency,
        interrupted=interrupted,
        counts=counts,
        throughput_per_min=round(len(results) / wall * 60, 2) if wall > 0 else 0.0,
        task_time_sum_s=round(sum(r.wall_time_s for r in results), 3),
        session_time_sum_s=round(sum(r.session_time_s or 0.0 for r in results), 3),
        tasks=[
            SummaryEntry(
                id=r.id,
                status=r.status,
                stop_reason=r.stop_reason,
                attempts=r.attempts,
                wall_time_s=r.wall_time_s,
                session_time_s=r.session_time_s,
                error=r.error,
            )
            for r in results
        ],
        skipped_lines=[{"line": b.line, "reason": b.reason} for b in plan.skipped_lines],
        resumed=list(plan.resumed),
    )
