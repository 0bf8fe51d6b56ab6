"""Process groups Cadenza starts (commands, MCP servers) and ends, whatever happens.

A child started with ``start_new_session=True`` leads its own process group, so signalling
the group reaches every process it started too (a server's workers, a command's background
jobs). The groups alive now are kept here, in one place for every kind of child, so the
server's SIGTERM handler and its exit kill all of them (``kill_live_groups``).

A group is registered in the same step that starts it (``start_group``): a SIGTERM or a
cancellation arriving while the child is being spawned waits until its group is registered,
so no child starts unseen just before the server ends.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

_LIVE_GROUPS: set[int] = set()
"""Process groups running now, killed when the Cadenza process exits."""

_STARTING: list[int] = [0]
"""How many groups are being started now (``start_group``)."""

_DEFERRED: list[int] = []
"""Signals that arrived while a group was being started (``exit_for_signal``)."""

P = TypeVar("P")


def register(pgid: int) -> None:
    """Remember the group ``pgid`` until ``forget``: it is killed at exit if still there."""
    _LIVE_GROUPS.add(pgid)


def forget(pgid: int) -> None:
    """The group ``pgid`` was ended by its owner."""
    _LIVE_GROUPS.discard(pgid)


def live_groups() -> frozenset[int]:
    """The groups registered now (for tests and diagnostics)."""
    return frozenset(_LIVE_GROUPS)


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group ``pgid``; False when the group has no process left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed user (setuid); the others were signalled
        return True
    return True


async def start_group(spawn: Awaitable[P], pid: Callable[[P], int]) -> P:
    """Await ``spawn`` (a child started with ``start_new_session=True``) and register its group.

    The spawn runs as a task of its own, which a cancellation of the caller does not reach,
    and ``exit_for_signal`` waits for it: nothing can come between the child's start and its
    registration. A caller cancelled meanwhile gets its ``CancelledError`` once the group is
    registered, and the group is killed then (the caller never sees the child).

    Args:
        spawn: Starts the child, e.g. ``anyio.open_process(..., start_new_session=True)``.
        pid: The child's pid (its group's id) from what ``spawn`` returns.

    Raises:
        SystemExit: A SIGTERM came while the child was being started (the group is
            registered, so the exit kills it).
        Exception: Whatever ``spawn`` raises (nothing was started).
    """

    async def started() -> P:
        child = await spawn
        register(pid(child))
        return child

    _STARTING[0] += 1
    task = asyncio.ensure_future(started())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            await asyncio.wait([task])
        if not task.cancelled() and task.exception() is None:
            group = pid(task.result())
            signal_group(group, signal.SIGKILL)
            forget(group)
        raise
    finally:
        _STARTING[0] -= 1
        if not _STARTING[0] and _DEFERRED:
            signum = _DEFERRED[0]
            _DEFERRED.clear()
            raise SystemExit(128 + signum)


def exit_for_signal(signum: int) -> None:
    """End the process for ``signum``, from a signal handler: ``SystemExit(128 + signum)``.

    While a group is being started (``start_group``) the exit waits until it is registered,
    so that the exit's ``kill_live_groups`` reaches it.
    """
    if _STARTING[0]:
        _DEFERRED.append(signum)
        return
    raise SystemExit(128 + signum)


def kill_live_groups() -> None:
    """SIGKILL every registered group (at exit, and from the servers' SIGTERM handlers)."""
    for pgid in list(_LIVE_GROUPS):
        signal_group(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


atexit.register(kill_live_groups)
