"""Where an ACP session lives: the checked ``cwd``, a loaded session's workspace, the list.

Kept out of ``acp.agent`` (the request handlers): these only read the arguments and the
stored transcripts.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from acp.schema import SessionInfo

from cadenza.acp.session import request_error
from cadenza.host.ports import SessionSummary


def folder_of(cwd: str) -> Path:
    """``cwd`` checked: an absolute path to an existing folder, resolved."""
    path = Path(cwd)
    if not path.is_absolute() or not path.is_dir():
        raise request_error(f"cwd must be an absolute path to an existing folder, got {cwd!r}")
    return path.resolve()


def session_root(session_id: str, stored_root: Path, folder: Path) -> Path:
    """The workspace of a loaded session: its stored one, or ``folder`` when that is gone."""
    if stored_root.is_dir() and stored_root.resolve() != folder:
        raise request_error(
            f"session {session_id} belongs to the workspace {stored_root}, not {folder}; "
            f"load it with cwd {str(stored_root)!r}"
        )
    return stored_root.resolve() if stored_root.is_dir() else folder


def title(task: str, limit: int = 80) -> str:
    """A session's title: the first line of its task, bounded."""
    line = task.strip().splitlines()[0] if task.strip() else "(no task)"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def session_infos(stored: Iterable[SessionSummary], root: Path | None) -> list[SessionInfo]:
    """The ``stored`` sessions (of the workspace ``root`` when given), in their order."""
    infos = []
    for summary in stored:
        if root is not None and Path(summary.root) != root:
            continue
        try:
            updated = datetime.fromtimestamp(summary.path.stat().st_mtime, UTC)
        except OSError:
            updated = summary.started
        infos.append(
            SessionInfo(
                session_id=summary.session_id,
                cwd=summary.root,
                title=title(summary.task),
                updated_at=updated.isoformat(),
            )
        )
    return infos
