"""What a successful edit's result says after the tool's own line, under ``edit_echo``.

The changed lines (``echo.edit_echo``), and after a rename-shaped edit the places that still use
the old name in the edited file and the files the task is about (``Runtime.task_files``),
in place of the finish hint. Kept out of the runner: it reads the session's files and task.
"""

from __future__ import annotations

from cadenza.engine.echo import edit_echo, leftover_lines, leftover_note, renamed
from cadenza.engine.prime import MAX_SCANNED_BYTES, mentions
from cadenza.engine.runtime import Runtime
from cadenza.messages import UserMessage
from cadenza.tools.base import ToolError
from cadenza.tools.documents import current_document
from cadenza.tools.host import FileEdit
from cadenza.tools.paths import resolve_in_workspace


def edit_notes(rt: Runtime, edit: FileEdit, name: str) -> str:
    """The text appended to the result of ``edit`` (a change of the file ``name``)."""
    loop = rt.settings.loop
    left = _leftovers(rt, edit, name)
    return edit_echo(edit, name, loop.ending, numbered=loop.edit == "line_range", next_step=left)


def _leftovers(rt: Runtime, edit: FileEdit, name: str) -> str:
    """After a rename-shaped edit the task names: where the old name is still used, or ""."""
    pair = renamed(edit.old_text or "", edit.new_text)
    if pair is None or not mentions(_task(rt), pair[0]):
        return ""
    where: dict[str, list[int]] = {}
    for path in dict.fromkeys([name, *rt.task_files]):
        text = edit.new_text if path == name else _text(rt, path)
        if text is not None and (lines := leftover_lines(pair[0], text)):
            where[path] = lines
    return leftover_note(pair[0], where) if where else ""


def _task(rt: Runtime) -> str:
    return next(
        (m.content for m in rt.messages if isinstance(m, UserMessage) and m.tag == "task"), ""
    )


def _text(rt: Runtime, path: str) -> str | None:
    """A task file's current text: regular files up to ``MAX_SCANNED_BYTES`` only."""
    try:
        resolved = resolve_in_workspace(rt.root, path)
        if not resolved.is_file() or resolved.stat().st_size > MAX_SCANNED_BYTES:
            return None
        return current_document(rt.editor, resolved).text
    except (ToolError, OSError, ValueError):
        return None
