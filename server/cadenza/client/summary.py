"""The session's file changes, merged per path, with diff stats and truncated unified diffs.

Every diff Cadenza prints or reports (the summary, ``--output json``'s ``files[].diff``, the
review of an edit) is made here, from texts whose secrets are redacted first
(``secrets.redact``: API keys and the environment's other credentials): a key that a command
wrote into a file stays in the file, which is the person's, but never in what is shown.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from cadenza.client.edits import ChangeKind, FileChange
from cadenza.client.safe_text import visible_line
from cadenza.secrets import redact, register_known_keys


def merge_changes(changes: Iterable[FileChange]) -> tuple[FileChange, ...]:
    """Fold successive changes of the same path into one (first ``before``, last ``after``).

    A file created and later deleted in the same session disappears from the result; a
    file that ends as it began is dropped too, unless it moved to another path.

    Args:
        changes: Changes in the order they were written.

    Returns:
        One change per path, in the order each path was first changed.
    """
    merged: dict[str, FileChange] = {}
    for change in changes:
        if change.kind == "renamed" and change.old_path in merged:
            change = _moved(merged.pop(change.old_path), change)
        earlier = merged.get(change.path)
        merged[change.path] = change if earlier is None else _fold(earlier, change)
    return tuple(c for c in merged.values() if c.before != c.after or _moves(c))


def _moves(change: FileChange) -> bool:
    """A rename to another path: listed even when the content is unchanged."""
    return change.kind == "renamed" and change.old_path not in (None, change.path)


def _moved(source: FileChange, rename: FileChange) -> FileChange:
    """A rename of a file that earlier changes of this session already touched."""
    if source.before is None:
        return replace(rename, kind="created", before=None, old_path=None)
    return replace(rename, before=source.before, old_path=source.old_path or source.path)


def _fold(earlier: FileChange, later: FileChange) -> FileChange:
    before, old_path = earlier.before, earlier.old_path
    if later.kind == "renamed":
        before, old_path = later.before, later.old_path
    kind: ChangeKind = later.kind
    if before is None and later.after is not None:
        kind = "created"
    elif before is not None and later.after is not None and later.kind != "renamed":
        kind = "renamed" if old_path is not None else "modified"
    return replace(later, kind=kind, before=before, old_path=old_path)


@dataclass(frozen=True, kw_only=True)
class DiffStat:
    """Lines added and removed (as ``git diff --stat`` counts them)."""

    added: int
    removed: int


_AFTER_EOL = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def _lines(text: str | None) -> list[str]:
    """Lines with their terminators, split by LSP rules (LF, CRLF, CR), secrets redacted."""
    if not text:
        return []
    register_known_keys()  # once per process: the keys of the environment the server has too
    lines = _AFTER_EOL.split(redact(text))
    return lines[:-1] if lines[-1] == "" else lines


def diff_stat(change: FileChange) -> DiffStat:
    """Count added and removed lines of ``change``."""
    added = removed = 0
    for line in difflib.unified_diff(_lines(change.before), _lines(change.after), n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return DiffStat(added=added, removed=removed)


def unified_diff(change: FileChange, *, max_lines: int = 40) -> list[str]:
    """The unified diff of ``change`` (3 lines of context), at most ``max_lines`` lines.

    Line endings are dropped from the diff lines; a CRLF file diffs the same as an LF file.

    Returns:
        The diff lines, with a last line ``… N more lines`` when it was truncated.
    """
    old, new = visible_line(change.old_path or change.path), visible_line(change.path)
    old_name = f"a/{old}" if change.before is not None else "/dev/null"
    new_name = f"b/{new}" if change.after is not None else "/dev/null"
    lines = [
        line.rstrip("\r\n")
        for line in difflib.unified_diff(
            _lines(change.before), _lines(change.after), old_name, new_name
        )
    ]
    if len(lines) <= max_lines:
        return lines
    return [*lines[:max_lines], f"… {len(lines) - max_lines} more lines"]
