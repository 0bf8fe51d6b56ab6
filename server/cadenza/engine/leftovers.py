"""Where a renamed name is still used, across the whole workspace (bounded).

The edit echo after a rename-shaped edit and the rename check at ``complete(done)``
(``engine.checks``) both ask which files still use the old name. Scanning only the files the
task names would miss them in a task that names none ("rename calc_total to compute_total"),
which would then end as done with a call left in another file. The scan covers every
file ``list_files`` lists (the same ``SKIP_DIRS``: ``.git``, ``node_modules``, virtual
environments...), within bounds so a huge repository cannot stall the session: files over
``MAX_FILE_BYTES``, binary files (a NUL byte), files that are not UTF-8 and files that are not
regular (a FIFO) are skipped, and the scan stops after ``MAX_FILES`` files or ``MAX_TOTAL_BYTES``
read, or after ``SCAN_DEADLINE_S`` (``Uses.complete`` says so). The disk is read in a worker
thread; open editor buffers (unsaved text) win over the disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cadenza.engine.echo import leftover_lines, renamed
from cadenza.engine.prime import mentions
from cadenza.fileread import FileReadError, in_worker
from cadenza.tools.host import FileEdit, ToolHost
from cadenza.tools.paths import relative_name
from cadenza.tools.read import walk_files
from cadenza.workspace_files import WorkspaceFileError, read_workspace_file

MAX_FILES = 5_000
MAX_FILE_BYTES = 1_000_000
MAX_TOTAL_BYTES = 50_000_000
SCAN_DEADLINE_S = 120.0
"""A scan that takes longer (a stuck disk) is given up: ``Uses.complete`` is False."""


@dataclass(frozen=True, kw_only=True)
class Uses:
    """The places a name is still used.

    Attributes:
        where: Workspace-relative file → 1-based lines that use the name as a whole word.
        files: Files looked at.
        complete: False when a bound stopped the scan before the last file.
    """

    where: dict[str, list[int]] = field(default_factory=dict)
    files: int = 0
    complete: bool = True


def task_rename(task: str, edit: FileEdit) -> tuple[str, str] | None:
    """The rename ``edit`` made, ``(old_name, new_name)``, when the task is about it.

    The change must have a rename's shape (``echo.renamed``) and the task must name the old
    or the new name as a whole word: a change of ``a + b`` to ``a + c`` elsewhere is no
    rename the person asked for, and searching the workspace for ``b`` would only mislead.
    """
    if edit.kind != "change":
        return None
    pair = renamed(edit.old_text or "", edit.new_text)
    if pair is None or not (mentions(task, pair[0]) or mentions(task, pair[1])):
        return None
    return pair


def _scan(root: Path, name: str) -> tuple[dict[Path, list[int]], list[Path], bool]:
    """The disk part of ``find_uses`` (runs in a worker thread): uses, files seen, complete."""
    needle = name.encode()
    where: dict[Path, list[int]] = {}
    seen: list[Path] = []
    total = 0
    for path in walk_files(root, root):
        if len(seen) >= MAX_FILES:
            return where, seen, False
        seen.append(path)
        try:
            if total + path.stat().st_size > MAX_TOTAL_BYTES:
                return where, seen, False
            data = read_workspace_file(root, path, max_bytes=MAX_FILE_BYTES)
        except (OSError, WorkspaceFileError):  # a FIFO, a link out, too large: not read
            continue
        if data is None:
            continue
        total += len(data)
        if needle not in data or b"\x00" in data:
            continue  # the cheap test first: most files never hold the name
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if lines := leftover_lines(name, text, suffix=path.suffix):
            where[path] = lines
    return where, seen, True


async def find_uses(root: Path, host: ToolHost, name: str) -> Uses:
    """Every whole-word use of ``name`` in the workspace at ``root``, bounded (see above).

    Args:
        root: The workspace root.
        host: The editor: an open buffer's text replaces the file's on disk.
        name: The identifier to look for.
    """
    try:
        found, seen, complete = await in_worker(_scan, root, name, deadline_s=SCAN_DEADLINE_S)
    except FileReadError:  # the disk is too slow to scan in time
        return Uses(complete=False)
    for path in seen:  # on this thread: the editor's buffers are not shared with workers
        buffer = host.open_document(path)
        if buffer is None:
            continue
        found.pop(path, None)
        if lines := leftover_lines(name, buffer.text, suffix=path.suffix):
            found[path] = lines
    where = {relative_name(root, p): found[p] for p in sorted(found)}
    return Uses(where=where, files=len(seen), complete=complete)
