"""Slash commands: the workflows and the workspace's prompt files, offered and expanded.

A prompt starting with ``/name rest`` names a command:

- a workflow (``/plan-implement-review fix the parser``): the turn runs that workflow with
  ``rest`` as the text;
- a prompt file ``.cadenza/commands/NAME.md`` of the workspace: its body (after an optional
  front matter of ``key: value`` lines between ``---`` lines, where ``description`` and
  ``argument-hint`` are read) with ``$ARGUMENTS`` replaced by ``rest`` (``rest`` is added
  after a body without ``$ARGUMENTS``).

A workflow wins over a prompt file of the same name: a file in the workspace must not replace
what a name means (the clash is logged, naming the file). Prompt files are read under the
workspace path rule (``workspace_files``): a link out of the workspace, a FIFO or a file over
``MAX_COMMAND_BYTES`` is skipped with a warning, never read. An unknown ``/name`` is left as
typed: the model reads it as text.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cadenza.host.catalog import workflow_choices
from cadenza.textio import UndecodableError, decode_bytes
from cadenza.workspace_files import WorkspaceFileError, read_workspace_file

log = logging.getLogger(__name__)

COMMANDS_DIR = Path(".cadenza") / "commands"
MAX_COMMAND_BYTES = 64_000
"""A prompt file larger than this is skipped (with a warning in the log)."""
ARGUMENTS = "$ARGUMENTS"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
_INVOCATION = re.compile(r"^/(?P<name>[A-Za-z0-9][A-Za-z0-9_.:-]{0,63})(?:\s+(?P<rest>.*))?$", re.S)


@dataclass(frozen=True, kw_only=True)
class SlashCommand:
    """One command a person can type as ``/name``.

    Attributes:
        name: Without the slash.
        description: One line about it.
        hint: What to type after it (e.g. ``the file to fix``); empty when nothing is asked.
        kind: ``workflow`` or ``file``.
        body: A file command's prompt text (empty for a workflow).
    """

    name: str
    description: str
    hint: str
    kind: Literal["workflow", "file"]
    body: str = ""


@dataclass(frozen=True, kw_only=True)
class Expanded:
    """A prompt after expansion: its text, and the workflow a workflow command names."""

    text: str
    workflow: str | None = None
    command: str | None = None


def slash_commands(root: Path) -> list[SlashCommand]:
    """The workflows, then the workspace's prompt files, by name (a workflow wins a clash)."""
    found: dict[str, SlashCommand] = {}
    for choice in workflow_choices(root):
        description = choice.description or f"run the {choice.name} workflow"
        found[choice.name] = SlashCommand(
            name=choice.name, description=description, hint="what to do", kind="workflow"
        )
    for command in _file_commands(root):
        if command.name in found:
            log.warning(
                "ignoring the command file %s: a workflow is called %s (rename the file)",
                COMMANDS_DIR / f"{command.name}.md",
                command.name,
            )
            continue
        found[command.name] = command
    return sorted(found.values(), key=lambda c: (c.kind != "workflow", c.name))


def _file_commands(root: Path) -> list[SlashCommand]:
    folder = root / COMMANDS_DIR
    if not folder.is_dir():
        return []
    commands = []
    for path in sorted(folder.glob("*.md")):
        if not _NAME.match(path.stem):
            continue
        try:
            data = read_workspace_file(root, path, max_bytes=MAX_COMMAND_BYTES)
            if data is None:
                continue
            text = decode_bytes(data).text
        except (WorkspaceFileError, UndecodableError) as exc:
            log.warning("skipping the command file %s: %s", path, exc)
            continue
        meta, body = _front_matter(text)
        first = next((line.strip() for line in body.splitlines() if line.strip()), path.stem)
        commands.append(
            SlashCommand(
                name=path.stem,
                description=meta.get("description") or first[:100],
                hint=meta.get("argument-hint", ""),
                kind="file",
                body=body.strip(),
            )
        )
    return commands


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """``key: value`` lines between a first ``---`` line and the next one, and the rest."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            meta = {}
            for line in lines[1:end]:
                key, sep, value = line.partition(":")
                if sep:
                    meta[key.strip().lower()] = value.strip().strip("\"'")
            return meta, "".join(lines[end + 1 :])
    return {}, text


def expand(text: str, root: Path) -> Expanded:
    """``text`` with a leading ``/name`` command expanded (unchanged when it names none)."""
    match = _INVOCATION.match(text.strip())
    if match is None:
        return Expanded(text=text)
    name, rest = match["name"], (match["rest"] or "").strip()
    command = next((c for c in slash_commands(root) if c.name == name), None)
    if command is None:
        return Expanded(text=text)
    if command.kind == "workflow":
        return Expanded(text=rest or text, workflow=command.name, command=name)
    if ARGUMENTS in command.body:
        body = command.body.replace(ARGUMENTS, rest)
    else:
        body = f"{command.body}\n\n{rest}" if rest else command.body
    return Expanded(text=body, command=name)
