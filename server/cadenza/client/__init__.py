"""The headless client of the Cadenza server, and the ``cadenza run`` CLI built on it.

:class:`HeadlessClient` spawns ``cadenza serve``, runs one agent session and reports its
outcome; :class:`WorkspaceEditApplier` writes the server's ``workspace/applyEdit`` to disk.
"""

from cadenza.client.edits import (
    ApplyResult,
    EditApplied,
    EditRefused,
    FileChange,
    WorkspaceEditApplier,
)
from cadenza.client.session import (
    ClientError,
    ClientOptions,
    HeadlessClient,
    ServerExitedError,
    ServerStartError,
    SessionOutcome,
    SessionStartError,
    run_task,
)

__all__ = [
    "ApplyResult",
    "ClientError",
    "ClientOptions",
    "EditApplied",
    "EditRefused",
    "FileChange",
    "HeadlessClient",
    "ServerExitedError",
    "ServerStartError",
    "SessionOutcome",
    "SessionStartError",
    "WorkspaceEditApplier",
    "run_task",
]
