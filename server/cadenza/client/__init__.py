"""The headless client of the Cadenza server, and the ``cadenza run`` CLI built on it.

:class:`HeadlessClient` spawns ``cadenza serve``, runs one agent session and reports how it
ended (:class:`RunResult`); :class:`WorkspaceEditApplier` writes the server's
``workspace/applyEdit`` to disk.
"""

from cadenza.client.edits import (
    ApplyResult,
    EditApplied,
    EditRefused,
    FileChange,
    WorkspaceEditApplier,
)
from cadenza.client.errors import (
    ClientError,
    ServerExitedError,
    ServerStartError,
    SessionStartError,
)
from cadenza.client.options import ClientOptions
from cadenza.client.outcome import RunResult
from cadenza.client.session import HeadlessClient, run_task

__all__ = [
    "ApplyResult",
    "ClientError",
    "ClientOptions",
    "EditApplied",
    "EditRefused",
    "FileChange",
    "HeadlessClient",
    "RunResult",
    "ServerExitedError",
    "ServerStartError",
    "SessionStartError",
    "WorkspaceEditApplier",
    "run_task",
]
