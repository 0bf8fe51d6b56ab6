"""Project rules: the workspace's rule files, read into the system prompt.

Every peer reads them (AGENTS.md, Claude Code's CLAUDE.md, Cursor's ``.cursorrules``, Cline's
``.clinerules``, Copilot's ``.github/copilot-instructions.md``), so projects write their
conventions there once. At the session's start the workspace root's files go into the system
prompt, in that order, together at most ``1 / RULES_SHARE`` of the model's context (a 1.5B
model's 8k context must not be flooded): what does not fit is cut with a note. AGENTS.md nests
(its spec: the nearest file up from the edited path wins), so the first edit under a folder
with its own AGENTS.md shows that file in the edit's result (``nested_rules``).

A rule file is text for the model, nothing more: it is never parsed for settings, and it never
changes permissions, the loop or the model (only the person's own configuration does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cadenza.engine.context import CHARS_PER_TOKEN
from cadenza.secrets import redact
from cadenza.textio import UndecodableError, decode_bytes
from cadenza.tools.paths import relative_name
from cadenza.workspace_files import WorkspaceFileError, read_workspace_file

RULE_FILES = (
    "AGENTS.md",
    "CLAUDE.md",
    ".cursorrules",
    ".clinerules",
    ".github/copilot-instructions.md",
)
"""Looked for at the workspace root, in this order (``.clinerules`` may be a folder)."""
RULES_SHARE = 8
"""The rules take at most 1/8 of the model's context (in tokens, ~4 characters each)."""
MAX_FOLDER_FILES = 20
"""Files read from a ``.clinerules`` folder (sorted by name)."""
NESTED = "AGENTS.md"
MAX_RULE_BYTES = 1_000_000
"""A rule file larger than this is not read (the prompt takes far less of it anyway)."""


@dataclass(frozen=True, kw_only=True)
class ProjectRules:
    """The rule files read for a prompt.

    Attributes:
        text: The prompt section ("" when there is none).
        files: Workspace-relative paths of the files read, in order.
        truncated: Those cut to fit the cap.
    """

    text: str = ""
    files: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)


def rules_budget(context_size: int) -> int:
    """Characters of rule text a model with ``context_size`` tokens gets."""
    return context_size // RULES_SHARE * CHARS_PER_TOKEN


def _candidates(root: Path) -> list[Path]:
    """The root's rule files that exist, in ``RULE_FILES`` order (a folder's files sorted)."""
    found: list[Path] = []
    for name in RULE_FILES:
        path = root / name
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.is_file())[:MAX_FOLDER_FILES]
        elif path.is_file():
            found.append(path)
    return found


def _read(root: Path, path: Path) -> str | None:
    """The text of a rule file inside the workspace, or None.

    None: outside the workspace, not a regular file, binary, too large or unreadable
    (``workspace_files.read_workspace_file``).
    """
    try:
        data = read_workspace_file(root, path, max_bytes=MAX_RULE_BYTES)
        return None if data is None else decode_bytes(data).text.strip()
    except (WorkspaceFileError, UndecodableError):
        return None


def render(root: Path, paths: list[Path], budget: int, heading: str) -> ProjectRules:
    """The prompt section for the rule files ``paths``, within ``budget`` characters."""
    blocks: list[str] = []
    files: list[str] = []
    truncated: list[str] = []
    left = budget
    for path in paths:
        text = _read(root, path)
        if not text or left <= 0:
            continue
        text = redact(text)  # before the cut: a key running past it would no longer match
        name = relative_name(root, path)
        files.append(name)
        if len(text) > left:
            text = text[:left] + f"\n[{len(text) - left} more characters of {name} not shown]"
            truncated.append(name)
        left -= len(text)
        blocks.append(f"## {name}\n{text}")
    if not blocks:
        return ProjectRules()
    return ProjectRules(text="\n\n".join([heading, *blocks]), files=files, truncated=truncated)


def project_rules(root: Path, context_size: int) -> ProjectRules:
    """The workspace root's rule files as a system-prompt section (see the module)."""
    heading = "Project rules (from the workspace's rule files; follow them):"
    return render(root, _candidates(root), rules_budget(context_size), heading)


def nested_rules(root: Path, edited: Path, shown: set[str], context_size: int) -> str:
    """The nearest AGENTS.md above ``edited`` below the root, once per session ("" if none).

    Args:
        root: The workspace root (its own AGENTS.md is already in the system prompt).
        edited: The file just edited (absolute).
        shown: Names of the nested rule files shown so far; updated.
        context_size: The model's context (tokens), for the cap.
    """
    folder = edited.parent
    while folder != root and folder.is_relative_to(root):
        candidate = folder / NESTED
        if candidate.is_file():
            name = relative_name(root, candidate)
            if name in shown:
                return ""
            shown.add(name)
            where = relative_name(root, folder)
            heading = f"Rules for {where}/ (they win over the project's for files there):"
            return render(root, [candidate], rules_budget(context_size), heading).text
        folder = folder.parent
    return ""
