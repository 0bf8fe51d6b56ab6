"""The edit echo (``LoopSettings.edit_echo``): what a successful edit's result also says.

Measured with the small local models (issue 11): after ``edited a.py: 1 replacement(s)`` they
often redo the same edit or stop without finishing. The echo shows the changed lines as the
file now reads them (as Claude Code's edit result shows a snippet) and says how to finish.
"""

from __future__ import annotations

from cadenza.engine.loop import Ending, finish_hint
from cadenza.tools.host import FileEdit

CONTEXT_LINES = 2
MAX_ECHO_LINES = 30


def changed_lines(old: str, new: str) -> tuple[int, int]:
    """The 0-based line range ``[start, end)`` of ``new`` that differs from ``old``.

    The common prefix and suffix of the two texts' lines are left out; an edit that only
    removed lines gives an empty range at the place of the removal.
    """
    a, b = old.splitlines(), new.splitlines()
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return start, end_b


def edit_echo(edit: FileEdit, name: str, ending: Ending) -> str:
    """The text added to the result of ``edit`` on the file ``name``.

    Up to ``MAX_ECHO_LINES`` lines around the change (``CONTEXT_LINES`` either side), with
    their 1-based line numbers in the header, then how to finish under ``ending``.
    """
    lines = edit.new_text.splitlines()
    start, end = changed_lines(edit.old_text or "", edit.new_text)
    first = max(start - CONTEXT_LINES, 0)
    last = min(max(end, start + 1) + CONTEXT_LINES, len(lines), first + MAX_ECHO_LINES)
    shown = "\n".join(lines[first:last])
    where = f"lines {first + 1}-{last}" if last > first else "now empty"
    return (
        f"\n{name} now reads ({where} of {len(lines)}):\n{shown}\n"
        f"If the task is done, {finish_hint(ending)}; otherwise make the next change."
    )
