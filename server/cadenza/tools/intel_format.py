"""How code-intelligence answers read for a small model: short lines, bounded, workspace-relative.

A location is ``path:line: the line's text``; a diagnostic is ``path:line: severity: message``.
Paths outside the workspace (a library's stubs) are named but never read. ``new_problems`` is
the diff the edit results use: the errors a change introduced, without those the file had.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from cadenza.secrets import redact_then_cut
from cadenza.tools.intel import IntelDiagnostic, IntelLocation
from cadenza.tools.paths import relative_name

MAX_LOCATIONS = 40
"""Locations listed in one result; the rest are counted."""

MAX_DIAGNOSTICS = 30
"""Diagnostics listed by the ``diagnostics`` tool; the rest are counted."""

MAX_TEXT_CHARS = 100
"""A location's line text, cut to this many characters."""

MAX_MESSAGE_CHARS = 200
"""A diagnostic's message (first line), cut to this many characters."""

SEVERITY_ORDER = {"error": 0, "warning": 1, "information": 2, "hint": 3}

LineOf = Callable[[Path, int], str | None]
"""The text of a 0-based line of a workspace file (None: unreadable)."""


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` is in the workspace ``root``."""
    return path == root or root in path.parents


def place(root: Path, path: Path) -> str:
    """How a result names ``path``: workspace-relative, or its file name outside."""
    if inside(root, path):
        return relative_name(root, path)
    return f"{path.name} (outside the workspace)"


def _cut(text: str, limit: int) -> str:
    return redact_then_cut(text.strip(), limit - 1)


def format_locations(
    root: Path, locations: Iterable[IntelLocation], line_of: LineOf
) -> tuple[list[str], int]:
    """One line per distinct location (``path:line: text``), sorted; and how many were cut."""
    seen: set[tuple[Path, int, int]] = set()
    ordered: list[IntelLocation] = []
    for loc in sorted(locations, key=lambda loc: (str(loc.path), loc.line, loc.character)):
        key = (loc.path, loc.line, loc.character)
        if key not in seen:
            seen.add(key)
            ordered.append(loc)
    lines: list[str] = []
    for loc in ordered[:MAX_LOCATIONS]:
        where = f"{place(root, loc.path)}:{loc.line + 1}"
        text = line_of(loc.path, loc.line) if inside(root, loc.path) else None
        lines.append(f"{where}: {_cut(text, MAX_TEXT_CHARS)}" if text else where)
    return lines, max(0, len(ordered) - MAX_LOCATIONS)


def format_diagnostic(root: Path, diag: IntelDiagnostic) -> str:
    """``path:line: severity: message`` (the message's first line, cut)."""
    message = diag.message.strip().splitlines()[0] if diag.message.strip() else "(no message)"
    return (
        f"{place(root, diag.path)}:{diag.line + 1}: {diag.severity}: "
        f"{_cut(message, MAX_MESSAGE_CHARS)}"
    )


def sort_diagnostics(diags: Iterable[IntelDiagnostic]) -> list[IntelDiagnostic]:
    """Errors first, then by file and line."""
    return sorted(
        diags, key=lambda d: (SEVERITY_ORDER.get(d.severity, 9), str(d.path), d.line, d.character)
    )


def format_diagnostics(
    root: Path, diags: Iterable[IntelDiagnostic], limit: int = MAX_DIAGNOSTICS
) -> tuple[list[str], int]:
    """Bounded ``path:line: severity: message`` lines, errors first; and how many were cut."""
    ordered = sort_diagnostics(diags)
    return [format_diagnostic(root, d) for d in ordered[:limit]], max(0, len(ordered) - limit)


def _identity(diag: IntelDiagnostic) -> tuple[Path, str, str, str | None]:
    """What stays the same when an edit moves a diagnostic to another line."""
    return (diag.path, diag.severity, " ".join(diag.message.split()), diag.code)


def new_problems(
    before: Iterable[IntelDiagnostic], after: Iterable[IntelDiagnostic]
) -> list[IntelDiagnostic]:
    """The errors in ``after`` that ``before`` did not have (by file, message and code).

    Line numbers are not compared: an edit above an old error moves it. Each old error
    cancels one new one of the same identity, so a second copy of an old error still counts.
    """
    old = Counter(_identity(d) for d in before if d.severity == "error")
    fresh: list[IntelDiagnostic] = []
    for diag in sort_diagnostics(after):
        if diag.severity != "error":
            continue
        key = _identity(diag)
        if old[key] > 0:
            old[key] -= 1
        else:
            fresh.append(diag)
    return fresh
