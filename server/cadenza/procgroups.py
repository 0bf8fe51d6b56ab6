"""Process groups Cadenza starts (commands, MCP servers) and ends, whatever happens.

A child started with ``start_new_session=True`` leads its own process group, so signalling
the group reaches every process it started too (a server's workers, a command's background
jobs). The groups alive now are kept here, in one place for every kind of child, so the
server's SIGTERM handler and its exit kill all of them (``kill_live_groups``).
"""

from __future__ import annotations

import atexit
import os
import signal

_LIVE_GROUPS: set[int] = set()
"""Process groups running now, killed when the Cadenza process exits."""


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


def kill_live_groups() -> None:
    """SIGKILL every registered group (at exit, and from the servers' SIGTERM handlers)."""
    for pgid in list(_LIVE_GROUPS):
        signal_group(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


atexit.register(kill_live_groups)
