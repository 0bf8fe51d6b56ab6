"""The edit echo (``LoopSettings.edit_echo``): what a successful edit's result also says.

With the small local models (docs/lab/local-model-log.md): after ``edited a.py: 1
replacement(s)`` they often redo the same edit or stop without finishing. The echo shows the
changed lines as the file now reads them (as Claude Code's edit result shows a snippet) and
says how to finish.
"""

from __future__ import annotations

import difflib
import io
import keyword
import re
import tokenize

from cadenza.engine.variants import finish_hint
from cadenza.textio import changed_span
from cadenza.tools.host import FileEdit
from cadenza.tools.textfile import lines_with_ends
from cadenza.types import Ending

_WORD = re.compile(r"[A-Za-z_]\w*")
PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
"""Files whose comments and strings are no use of a name (``leftover_lines``)."""
_FIELD = re.compile(r"\{[^{}]*\}")
"""An f-string's replacement field (one level: nested fields are rare in renamed code)."""
MAX_RENAME_SPAN = 4_000
"""Characters of changed text looked at for a rename (a larger change is no rename)."""
MAX_LEFTOVER_LINES = 8
MAX_LEFTOVER_FILES = 10
"""Files named in a leftover note; a count says how many more there are."""
CONTEXT_LINES = 2
MAX_DIFF_LINES = 2_000
MAX_ECHO_LINES = 30
"""Lines shown in all (the changed ones first come first); a note says how many were left."""


def changed_blocks(old: str, new: str) -> list[tuple[int, int]]:
    """The 0-based line ranges ``[start, end)`` of ``new`` that differ from ``old``.

    One range per change (``difflib.SequenceMatcher`` over the lines between the common head
    and tail; one range when that middle exceeds ``MAX_DIFF_LINES``, as the matcher is
    quadratic); a deletion is an empty range at the place of the removal.
    """
    a = [line.rstrip("\r\n") for line in lines_with_ends(old)]
    b = [line.rstrip("\r\n") for line in lines_with_ends(new)]
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if not middle_a and not middle_b:
        return []
    if max(len(middle_a), len(middle_b)) > MAX_DIFF_LINES:
        return [(head, len(b) - tail)]
    matcher = difflib.SequenceMatcher(a=middle_a, b=middle_b, autojunk=False)
    return [(head + j1, head + j2) for tag, _, _, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _windows(blocks: list[tuple[int, int]], total: int) -> list[tuple[int, int]]:
    """Each change with ``CONTEXT_LINES`` either side, overlapping windows merged."""
    merged: list[tuple[int, int]] = []
    for start, end in blocks:
        lo, hi = max(start - CONTEXT_LINES, 0), min(max(end, start) + CONTEXT_LINES, total)
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def edit_echo(
    edit: FileEdit,
    name: str,
    ending: Ending,
    *,
    numbered: bool = False,
    next_step: str = "",
    closing: bool = True,
) -> str:
    """The text added to the result of ``edit`` on the file ``name``.

    The changed lines as the file now reads them, ``CONTEXT_LINES`` either side, at most
    ``MAX_ECHO_LINES`` in all (``...`` between separate changes, a note for what is left
    out), numbered ``N| `` when ``numbered`` (the line-range style); then ``next_step``, or
    by default how to finish. (The model acts on the last sentence it reads: a note on what
    is left must replace the finish hint, not follow it.) Without
    ``closing`` (all but the last file of a result that changed several) that line is left
    out: it is said once, at the end.
    """
    lines = [line.rstrip("\r\n") for line in lines_with_ends(edit.new_text)]
    finish = next_step or (
        f"If the task is done, {finish_hint(ending)}; otherwise make the next change."
    )
    finish = f"\n{finish}" if closing else ""
    if not lines:
        return f"\n{name} is now empty.{finish}"
    shown: list[str] = []
    left = 0
    for lo, hi in _windows(changed_blocks(edit.old_text or "", edit.new_text), len(lines)):
        if shown:
            shown.append("...")
        for i in range(lo, hi):
            if len(shown) >= MAX_ECHO_LINES:
                left += 1
                continue
            shown.append(f"{i + 1}| {lines[i]}" if numbered else lines[i])
    if left:
        shown.append(f"[{left} more changed or nearby lines not shown: read_file to see them]")
    return f"\n{name} now reads (around the change, {len(lines)} lines in all):\n" + (
        "\n".join(shown) + finish
    )


NOT_NAMES = frozenset(
    {
        *keyword.kwlist,
        *keyword.softkwlist,
        *("self", "cls", "this", "let", "const", "var", "function", "new", "typeof"),
        *("then", "fi", "do", "done", "esac", "echo", "local", "export", "true", "false"),
    }
)
"""Words that are never the subject of a rename (keywords, ``self``/``this``)."""


def renamed(old: str, new: str) -> tuple[str, str] | None:
    """The identifier a change renamed, ``(old_name, new_name)``, or None.

    The changed span (after the common head and tail, widened to whole words) must hold the
    same words in both texts except one name replaced by another wherever they differ: the
    shape of a rename, whether of one use or several (``replace_all``). Keywords are not
    names (``if`` to ``while`` is no rename); the caller also requires the task to mention
    the old name.
    """
    head, old_end, new_end = changed_span(old, new)
    while head and (old[head - 1].isalnum() or old[head - 1] == "_"):
        head -= 1
    while old_end < len(old) and (old[old_end].isalnum() or old[old_end] == "_"):
        old_end, new_end = old_end + 1, new_end + 1
    if max(old_end - head, new_end - head) > MAX_RENAME_SPAN:
        return None
    before, after = _WORD.findall(old[head:old_end]), _WORD.findall(new[head:new_end])
    if len(before) != len(after):
        return None
    pairs = {(a, b) for a, b in zip(before, after, strict=True) if a != b}
    if len(pairs) != 1:
        return None
    (a, b) = next(iter(pairs))
    if a in after or a in NOT_NAMES or b in NOT_NAMES:
        return None
    return a, b


def leftover_lines(name: str, text: str, *, suffix: str = "") -> list[int]:
    """1-based lines of ``text`` that still use the identifier ``name`` as a whole word.

    In Python source (a file whose ``suffix`` is in ``PYTHON_SUFFIXES``), only code counts,
    as a language server's rename sees it: a comment or a string ("a short timeout" in a
    docstring) is no use of the name, while an f-string's replacement field is. Source that
    does not tokenize is read as plain text.
    """
    pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    if suffix in PYTHON_SUFFIXES:
        try:
            return _code_lines(name, text, pattern)
        except (tokenize.TokenError, SyntaxError):
            pass
    return [i for i, line in enumerate(lines_with_ends(text), 1) if pattern.search(line)]


def _code_lines(name: str, text: str, pattern: re.Pattern[str]) -> list[int]:
    """The lines where Python's tokens use ``name``: a name token, or an f-string's field."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME and token.string == name:
            lines.add(token.start[0])
        elif token.type == tokenize.STRING and "f" in _prefix(token.string).lower():
            for field in _FIELD.finditer(token.string):
                if pattern.search(field.group()):
                    lines.add(token.start[0] + token.string.count("\n", 0, field.start()))
    return sorted(lines)


def _prefix(literal: str) -> str:
    """A string literal's prefix letters (``rf`` of ``rf"..."``)."""
    return literal[: len(literal) - len(literal.lstrip("rRbBuUfF"))]


def leftover_places(where: dict[str, list[int]]) -> str:
    """``where`` (file → 1-based lines) as ``a.py lines 1, 3; b.py line 2``, bounded."""
    places = "; ".join(
        f"{path} line{'s' if len(lines) > 1 else ''} "
        + ", ".join(str(n) for n in lines[:MAX_LEFTOVER_LINES])
        + (" …" if len(lines) > MAX_LEFTOVER_LINES else "")
        for path, lines in list(where.items())[:MAX_LEFTOVER_FILES]
    )
    if len(where) > MAX_LEFTOVER_FILES:
        places += f"; and {len(where) - MAX_LEFTOVER_FILES} more files"
    return places


def leftover_note(old_name: str, where: dict[str, list[int]]) -> str:
    """What the echo adds when a rename left uses of the old name (``where``: file → lines)."""
    return (
        f"Not done yet if this edit is part of renaming {old_name}: {old_name} is still used "
        f"in: {leftover_places(where)}. Change those next."
    )
