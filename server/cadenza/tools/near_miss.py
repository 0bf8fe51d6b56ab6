"""What the file has where an ``old_string`` that was not found was meant to be.

On the ``checked`` task set (docs/lab/local-model-log.md) the 1.5B model's ``old_string``
often named the right place but left lines out (a function's first line and its body, without
the docstring between) or changed quotes; "not found, copy the exact text" then made it give up
or repeat the call. As Aider answers a failed search block with the lines it probably meant,
the error shows the file's own text of that place, to copy. Nothing is applied from a near
miss: the edit stays refused, so an ambiguous or wrong guess changes nothing.
"""

from __future__ import annotations

MAX_SPAN = 40
"""Lines shown at most: a wider span is no near miss of a few-line ``old_string``."""


def _norm(line: str) -> str:
    # Quotes and runs of whitespace: the differences a copied line most often has.
    return " ".join(line.replace("'", '"').split())


def _only(lines: list[str], wanted: str) -> int | None:
    found = [i for i, line in enumerate(lines) if _norm(line) == wanted]
    return found[0] if len(found) == 1 else None


def near_miss(text: str, old_string: str, name: str) -> str | None:
    """The "not found" error that quotes the file where ``old_string`` was meant, or None.

    The place: the one file line equal to ``old_string``'s first line (ignoring quote style
    and whitespace), up to the one line equal to its last line when that comes after it
    within ``MAX_SPAN`` lines, else as many lines as ``old_string`` has.
    """
    old = [_norm(line) for line in old_string.splitlines() if line.strip()]
    if not old:
        return None
    lines = text.splitlines()
    first = _only(lines, old[0])
    if first is None:
        return None
    last = _only(lines, old[-1]) if len(old) > 1 else first
    if last is None or not first <= last < first + MAX_SPAN:
        last = min(first + len(old_string.splitlines()), len(lines)) - 1
    quoted = "\n".join(lines[first : last + 1])
    where = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
    return (
        f"old_string was not found in {name}, but its first line is line {first + 1}. The "
        f"file's {where}, exactly as they are (copy old_string from here, every line between "
        f"its first and last included):\n{quoted}"
    )
