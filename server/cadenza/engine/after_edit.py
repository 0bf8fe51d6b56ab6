"""What a successful edit leaves behind: the session's record of it, and the edit's notes.

Every applied change is recorded in the runtime (``Runtime.changed``, and ``Runtime.renames``
for a rename the task is about), whatever the loop variant: the done checks
(``engine.checks``) read them. Under ``edit_echo`` the result also shows the changed lines
(``echo.edit_echo``) and, after a rename, the places across the workspace that still use the
old name (``engine.leftovers``), in place of the finish hint. Kept out of the runner: it reads
the session's files and task.
"""

from __future__ import annotations

from cadenza.engine.echo import edit_echo, leftover_lines, leftover_note
from cadenza.engine.leftovers import find_uses, task_rename
from cadenza.engine.runtime import Runtime
from cadenza.messages import UserMessage
from cadenza.tools.base import text_digest
from cadenza.tools.host import FileEdit


def record_edit(rt: Runtime, edit: FileEdit, name: str) -> tuple[str, str] | None:
    """Note ``edit`` (of the file ``name``) in the session; the rename it made, if any."""
    rt.changed.append(name)
    known = rt.shown.get(edit.path)
    if edit.kind == "change" and edit.old_text is not None and known == text_digest(edit.old_text):
        # Its own change of a text it knew: it knows the result. A change of a text it did
        # not know (the person's change since) leaves the digest of what it was shown.
        rt.shown[edit.path] = text_digest(edit.new_text)
    if edit.kind == "delete":
        rt.written.pop(edit.path, None)
    elif edit.kind == "rename" and edit.new_path is not None:
        rt.written.pop(edit.path, None)
        rt.written[edit.new_path] = edit.new_text
    else:
        rt.written[edit.path] = edit.new_text
    pair = task_rename(task_text(rt), edit)
    if pair is not None:
        rt.renames[pair[0]] = pair[1]
    return pair


async def edit_notes(
    rt: Runtime,
    edit: FileEdit,
    name: str,
    rename: tuple[str, str] | None,
    *,
    closing: bool = True,
) -> str:
    """The text appended to the result of ``edit`` (a change of the file ``name``).

    ``closing``: the last changed file of the result, whose echo ends with what to do next.
    """
    loop = rt.settings.loop
    left = ""
    if rename is not None and closing:
        uses = await find_uses(rt.root, rt.editor, rename[0])
        # The edited file as this edit left it (an editor's buffer may not have caught up).
        where = {name: leftover_lines(rename[0], edit.new_text, suffix=edit.path.suffix)}
        where.update((path, lines) for path, lines in uses.where.items() if path != name)
        where = {path: lines for path, lines in where.items() if lines}
        if where:
            left = leftover_note(rename[0], where)
    return edit_echo(
        edit,
        name,
        loop.ending,
        numbered=loop.edit == "line_range",
        next_step=left,
        closing=closing,
    )


def task_text(rt: Runtime) -> str:
    """The person's task: the first user message tagged ``task`` ("" when there is none)."""
    return next(
        (m.content for m in rt.messages if isinstance(m, UserMessage) and m.tag == "task"), ""
    )
