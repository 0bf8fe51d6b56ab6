"""Whitespace-forgiving matching of ``edit_file``'s ``old_string``, where it is safe.

Small models copy ``old_string`` with the wrong indentation (a method's body copied from
column 0) or with trailing spaces the file does not have, and the exact replacement fails;
measured with the 1.5B local model, such an edit was then often retried unchanged or given
up. Peers forgive these two differences: Aider (``editblock_coder``: a match ignoring leading
whitespace, the replacement re-indented) and Cline (a line-trimmed fallback). Here, only when
the exact match fails, and in this order:

1. ``trailing whitespace``: whole lines equal once trailing whitespace is ignored;
2. ``indentation``: whole lines equal once ``old_string``'s common indentation is set aside,
   all of them shifted by the same whitespace in the file; ``new_string`` is shifted the same
   way (the model under- or over-indented both alike).

3. ``skipped lines``: ``old_string``'s lines are whole lines of the file in order, except that
   the file has up to ``MAX_SKIPPED`` more lines at one place between two of them. The 1.5B
   model wrote a stub's ``def`` line and its ``raise NotImplementedError`` as ``old_string``
   and left out the docstring between (3 of the 4 ``implement`` tasks of the ``checked`` set;
   it then sent the same call again). The lines it left out are kept: ``new_string`` must
   begin with the lines before the gap (they go back after them), or hold the left-out lines
   itself; otherwise where they belong is a guess, and it is no match.

A stage's match is used only when it is unique: two places that match loosely stay an error
(an edit in the wrong place is worse than none). Blank lines are not skipped and partial lines
are not matched loosely: both could change text the model did not mean to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cadenza.tools.textfile import LINE_BREAK, lines_with_ends

Looseness = Literal["trailing whitespace", "indentation", "skipped lines"]

MAX_SKIPPED = 20
"""Most lines of the file that ``old_string`` may have left out at one place (a docstring)."""


@dataclass(frozen=True, kw_only=True)
class LooseMatch:
    """A place ``old_string`` matched loosely.

    Attributes:
        start: Offset of the first matched character in the text.
        end: Offset after the last matched line's content (its line break is kept).
        replacement: ``new_string`` as it goes there (re-indented for ``indentation``).
        how: Which difference was forgiven.
    """

    start: int
    end: int
    replacement: str
    how: Looseness


def _lines(text: str) -> list[str]:
    """``text`` split at any line break, without a last empty line after a final break."""
    parts = LINE_BREAK.split(text)
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _common(strings: list[str]) -> str:
    """The longest common prefix of ``strings`` ("" for none): of indentations, not paths."""
    if not strings:
        return ""
    low, high = min(strings), max(strings)
    size = 0
    while size < len(low) and low[size] == high[size]:
        size += 1
    return low[:size]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _shift(file_lines: list[str], old_rel: list[str]) -> str | None:
    """The one whitespace prefix that turns each ``old_rel`` line into its file line, or None."""
    prefix: str | None = None
    for line, rel in zip(file_lines, old_rel, strict=True):
        line, rel = line.rstrip(), rel.rstrip()
        if not rel.strip():
            if line.strip():
                return None
            continue
        if not line.endswith(rel):
            return None
        shift = line[: len(line) - len(rel)]
        if shift.strip() or (prefix is not None and shift != prefix):
            return None
        prefix = shift
    return prefix


def loose_matches(text: str, old_string: str, new_string: str) -> list[LooseMatch]:
    """The loose matches of ``old_string`` in ``text``: those of the first stage that has any.

    Returns:
        An empty list when neither stage matches; more than one item means ambiguous.
    """
    with_ends = lines_with_ends(text)
    content = [line.rstrip("\r\n") for line in with_ends]
    starts = [0]
    for line in with_ends:
        starts.append(starts[-1] + len(line))
    old, new = _lines(old_string), _lines(new_string)
    count = len(old)
    if not any(line.strip() for line in old) or count > len(content):
        return []
    windows = range(len(content) - count + 1)

    def place(k: int, replacement: str, how: Looseness) -> LooseMatch:
        end = starts[k + count - 1] + len(content[k + count - 1])
        if not new_string.strip():  # a deletion takes the lines' breaks too
            end, replacement = starts[k + count], ""
        return LooseMatch(start=starts[k], end=end, replacement=replacement, how=how)

    trailing = [
        place(k, "\n".join(new), "trailing whitespace")
        for k in windows
        if all(content[k + i].rstrip() == old[i].rstrip() for i in range(count))
    ]
    if trailing:
        return trailing
    # old_string's own common indentation is set aside; new_string loses as much of it as
    # each of its lines has (a line indented less than old_string stays as it is).
    common = _common([_indent(line) for line in old if line.strip()])
    old_rel = [line[len(common) :] if line.strip() else "" for line in old]
    new_rel = [
        line[len(_common([_indent(line), common])) :] if line.strip() else "" for line in new
    ]
    found: list[LooseMatch] = []
    for k in windows:
        prefix = _shift(content[k : k + count], old_rel)
        if prefix is not None:
            shifted = "\n".join(prefix + line if line.strip() else "" for line in new_rel)
            found.append(place(k, shifted, "indentation"))
    if found or not new_string.strip():  # a deletion never spans lines it did not name
        return found
    return [
        LooseMatch(
            start=starts[k],
            end=starts[end] + len(content[end]),
            replacement=replacement,
            how="skipped lines",
        )
        for k, end, replacement in _skipping(content, old, new)
    ]


def _skipping(content: list[str], old: list[str], new: list[str]) -> list[tuple[int, int, str]]:
    """Stage 3's places: (first line, last line, replacement) of each.

    For each way to split ``old`` in two and each place its head matches, the nearest place
    after at most ``MAX_SKIPPED`` lines where its tail matches.
    """

    def matches_at(k: int, part: list[str]) -> bool:
        return k + len(part) <= len(content) and all(
            content[k + i].rstrip() == line.rstrip() for i, line in enumerate(part)
        )

    found: list[tuple[int, int, str]] = []
    for cut in range(1, len(old)):
        head, tail = old[:cut], old[cut:]
        if not any(line.strip() for line in head) or not any(line.strip() for line in tail):
            continue
        for k in range(len(content)):
            if not matches_at(k, head):
                continue
            after = k + cut
            gap = next((g for g in range(1, MAX_SKIPPED + 1) if matches_at(after + g, tail)), None)
            if gap is None:
                continue
            kept = content[after : after + gap]
            replacement = _keeping(kept, head, new)
            if replacement is not None:
                found.append((k, after + gap + len(tail) - 1, replacement))
    return found


def _keeping(kept: list[str], head: list[str], new: list[str]) -> str | None:
    """``new`` with the left-out lines ``kept`` after ``head``; None when that is a guess."""

    def flat(lines: list[str]) -> str:
        return "\n".join(line.strip() for line in lines if line.strip())

    if flat(kept) and flat(kept) in flat(new):  # new_string holds them already
        return "\n".join(new)
    if [line.rstrip() for line in new[: len(head)]] == [line.rstrip() for line in head]:
        return "\n".join([*new[: len(head)], *kept, *new[len(head) :]])
    return None if flat(kept) else "\n".join(new)  # blank lines may go
