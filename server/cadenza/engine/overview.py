"""A short overview of the workspace for the first message, so the model knows real paths."""

from __future__ import annotations

from pathlib import Path

from cadenza.fileread import walk
from cadenza.tools.paths import listed_name
from cadenza.tools.read import SKIP_DIRS

MAX_OVERVIEW_FILES = 40


def workspace_files(root: Path, limit: int = MAX_OVERVIEW_FILES) -> tuple[list[str], int]:
    """Up to ``limit`` workspace file paths (relative, sorted, hidden folders skipped).

    Returns:
        The paths, and how many more files there are.
    """
    names: list[str] = []
    more = 0
    for dirpath, dirnames, filenames in walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for filename in sorted(filenames):
            if len(names) < limit:
                names.append((Path(dirpath) / filename).relative_to(root).as_posix())
            else:
                more += 1
    return names, more


def workspace_overview(root: Path, limit: int = MAX_OVERVIEW_FILES) -> str:
    """Up to ``limit`` workspace file paths, one per line, plus a note when more exist.

    Returns:
        ``"(empty)"`` for no files.
    """
    names, more = workspace_files(root, limit)
    if not names:
        return "(empty)"
    return "\n".join(map(listed_name, names)) + (f"\n… and {more} more files" if more else "")
