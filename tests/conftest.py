"""Shared test set-up: the repository root on ``sys.path`` so ``tests.support`` imports, and the
order and cores of the suite's parallel run (``scripts/test.sh``: pytest-xdist, one file per
unit of work).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WORKER = os.environ.get("PYTEST_XDIST_WORKER")
"""``gw0``, ``gw1``...: this process is one of pytest-xdist's workers (None: a serial run)."""
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a parallel run, the files with real-model tests (``e2e``) go out first.

    They are the longest units of work (minutes each against seconds): started last, one of
    them would run alone at the end while the other workers wait. The rest keep xdist's own
    heuristic, most tests first. scripts/test.sh passes ``--no-loadscope-reorder`` so xdist
    keeps this order; every worker sorts the same collection the same way.
    """
    if WORKER is None:
        return
    slow = {item.path for item in items if item.get_closest_marker("e2e")}
    count = Counter(item.path for item in items)
    items.sort(key=lambda item: (item.path not in slow, -count[item.path]))


def _core_of_this_worker() -> set[int] | None:
    """One core for this worker's real-model tests, or None when the run is serial."""
    if WORKER is None or WORKERS < 2 or not hasattr(os, "sched_getaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return None
    return {cores[int(WORKER.removeprefix("gw")) % len(cores)]}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A real-model test in a parallel run keeps to one core, and so does its llama-server.

    llama-server takes a thread per usable core (``usable_cores``: the process's affinity),
    and its threads wait for one another spinning: with another worker's processes on the
    same cores it slowed from ~50 to ~6 tokens/s (measured at a load of 5 on 2 cores). Pinned
    to one core it runs one thread, which never waits for a descheduled sibling. The
    processes the test starts inherit the affinity; the worker gets its cores back after.
    """
    core = _core_of_this_worker() if item.get_closest_marker("e2e") else None
    if core is None:
        yield
        return
    previous = os.sched_getaffinity(0)
    _pin_threads(core)
    try:
        yield
    finally:
        _pin_threads(previous)


def _pin_threads(cores: set[int]) -> None:
    """Every thread of this process on ``cores`` (a new process inherits its thread's)."""
    for thread in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(thread), cores)
