"""Shared test set-up: the repository root on ``sys.path`` so ``tests.support`` imports, and the
order and cores of the suite's parallel run (``scripts/test.sh``: pytest-xdist, one file per
unit of work).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
import time
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


CORE_LOCKS = Path(tempfile.gettempdir()) / f"cadenza-test-cores-{os.getuid()}"
"""A lock file per core, held by the worker whose real-model test runs on it."""


@contextlib.contextmanager
def _a_core_of_its_own() -> Iterator[set[int] | None]:
    """A core no other worker's real-model test holds, or None when the run is serial.

    scripts/test.sh starts a worker more than there are cores: two real-model tests would
    share a core, so a third waits until one is free. A core is held by a file lock, which
    the workers see without talking to one another and which ends with its process.
    """
    if WORKER is None or WORKERS < 2 or not hasattr(os, "sched_getaffinity"):
        yield None
        return
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        yield None
        return
    CORE_LOCKS.mkdir(exist_ok=True)
    first = int(WORKER.removeprefix("gw")) % len(cores)
    with contextlib.ExitStack() as files:
        locks = [
            (core, files.enter_context(open(CORE_LOCKS / f"core-{core}", "a")))
            for core in cores[first:] + cores[:first]
        ]
        while True:
            for core, lock in locks:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                try:
                    yield {core}
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
                return
            time.sleep(0.2)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A real-model test in a parallel run keeps to one core, and so does its llama-server.

    llama-server takes a thread per usable core (``usable_cores``: the process's affinity),
    and its threads wait for one another spinning: with another worker's processes on the
    same cores it slowed from ~50 to ~6 tokens/s (measured at a load of 5 on 2 cores). Pinned
    to one core it runs one thread, which never waits for a descheduled sibling. The
    processes the test starts inherit the affinity; the worker gets its cores back after.
    Two real-model tests never share a core (:func:`_a_core_of_its_own`).
    """
    if not item.get_closest_marker("e2e"):
        yield
        return
    with _a_core_of_its_own() as core:
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
