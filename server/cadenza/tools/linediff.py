"""A line diff whose hunks are as small as the change, in time that grows with the change.

Why not ``difflib.SequenceMatcher``: it is quadratic in the worst case, and its ``autojunk``
heuristic, which avoids that, ignores popular lines and gives hunks far larger than the
change; so its callers capped it at 20,000 lines and sent one replacement above: two lines
changed 26,000 lines apart went to the editor as one ``TextEdit`` over all of them, and the
editor lost cursors, folds and undo steps between. ``patiencediff`` leaves a region
without unique lines as one hunk, and the pure-Python ``diff-match-patch`` gives up after a
time limit with one coarse hunk: neither keeps a repetitive file's hunks small.

How, for texts ``a`` → ``b`` (``changed_line_spans``; the result is always exact, and as
small as the change in the usual cases):

1. The texts are cut at long common runs found on their characters with ``str.find`` (C
   speed): a run unique on both sides and half the region long (diff-match-patch's
   half-match), or else one grown from a seed (``SEEDS``), cut to the whole lines it holds.
   Sparse changes far apart cost a few scans; the lines between are never split or hashed.
2. In what is left, each distinct line becomes a token, a character of a string, so runs of
   equal lines are compared by slice equality (``memcmp``), never line by line in Python;
   then, region by region from a stack (``line_matches``):
3. The common head and tail of the region are matched (exponential search over slices), and
   a half-match on the tokens splits it.
4. Patience anchors (Bram Cohen's patience diff, ``git diff --patience``): lines that occur
   once on each side, the longest run of them in the same order; the region splits at them.
   Ordinary code and prose end here, in linear time plus ``O(u log u)`` for ``u`` anchors.
   Anchors that would keep clearly fewer lines than the region has in common (one unique
   line moved across a repetitive region) are not used.
5. Otherwise (a repetitive region: blank lines, braces, data rows, one line repeated): the
   greedy edit-distance rounds of ``linerounds``, linear in the number of edits.
   A large region with too few lines in common to keep a quarter of it is one hunk.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from itertools import accumulate, chain, compress
from typing import Literal

from cadenza.tools.linerounds import ROUND_EDITS, Match, common_head, common_tail, diff_rounds

Tag = Literal["equal", "replace", "delete", "insert"]
Opcode = tuple[Tag, int, int, int, int]
"""As ``difflib.SequenceMatcher.get_opcodes``: ``a[i1:i2]`` becomes ``b[j1:j2]``."""

_MAX_TOKEN = 0x110000
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
"""An LSP line with its break (LF, CRLF or CR), as ``textfile.lines_with_ends``."""
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""What ``str.splitlines`` also splits at, and LSP does not."""
SEEDS = ((16, 8), (128, 16))
"""Seeds tried by ``_seeded_run``: (a seed is this part of the region, this many of them)."""
TEXT_SPLIT_CHARS = 4_096
"""Texts from this many characters on are first split at long common runs of characters."""


def tokens(a: Sequence[str], b: Sequence[str]) -> tuple[list[int], list[int]]:
    """``a`` and ``b`` as token lists: equal lines, equal numbers (numbered from 0).

    Built with ``dict.fromkeys``, ``zip`` and ``map`` (C speed, no loop per line in Python).
    """
    distinct = dict.fromkeys(chain(a, b))
    ids = dict(zip(distinct, range(len(distinct)), strict=True))
    return list(map(ids.__getitem__, a)), list(map(ids.__getitem__, b))


def _as_text(xl: list[int], yl: list[int]) -> tuple[Sequence[object], Sequence[object]]:
    """The token lists as strings, one character a token, compared with ``memcmp``.

    Past ``0x110000`` distinct lines (no character for each) the lists themselves: slices of
    them compare the same way, only slower.
    """
    if max(max(xl, default=0), max(yl, default=0)) >= _MAX_TOKEN:
        return xl, yl
    return "".join(map(chr, xl)), "".join(map(chr, yl))


def line_matches(xl: list[int], yl: list[int]) -> list[Match]:
    """The matching blocks of token lists ``xl`` and ``yl``, in order, touching ones joined.

    Regions are taken from a stack: head and tail matched; then split at a long common run
    (``_half_match``), else at patience anchors, else diffed by Myers rounds.
    """
    x, y = _as_text(xl, yl)
    found: list[Match] = []
    stack = [(0, len(x), 0, len(y))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        head = common_head(x, y, alo, blo, min(ahi - alo, bhi - blo))
        tail = common_tail(x, y, ahi, bhi, min(ahi - alo, bhi - blo) - head)
        found += [m for m in ((alo, blo, head), (ahi - tail, bhi - tail, tail)) if m[2]]
        region = (alo + head, ahi - tail, blo + head, bhi - tail)
        if region[0] == region[1] or region[2] == region[3]:
            continue
        half = _half_match(x, y, region)
        if half is not None:
            found.append(half)
            i, j, size = half
            stack += [(region[0], i, region[2], j), (i + size, region[1], j + size, region[3])]
            continue
        _divide((x, y, xl, yl), region, found, stack)
    return _merged(found)


def _divide(
    seqs: tuple[Sequence[object], Sequence[object], list[int], list[int]],
    region: tuple[int, int, int, int],
    found: list[Match],
    stack: list[tuple[int, int, int, int]],
) -> None:
    """Split ``region`` at its patience anchors, or diff it by Myers rounds, or leave it.

    A large region is left as one hunk when it has too few lines in common to keep a quarter
    of them (most of its lines change anyway: the replacement is at most about twice the
    change), or when its lines in common are mostly unique ones out of order (lines
    reordered: rounds would find few equal runs, in time in proportion to all its lines).
    """
    x, y, xl, yl = seqs
    alo, ahi, blo, bhi = region
    counts_a, counts_b = Counter(xl[alo:ahi]), Counter(yl[blo:bhi])
    common = sum((counts_a & counts_b).values())  # no alignment keeps more lines
    unique = {t for t, n in counts_a.items() if n == 1 and counts_b.get(t) == 1}
    anchors = _anchors(xl, yl, region, unique)
    size = ahi - alo + bhi - blo
    if anchors and _kept(anchors, region) + common // 64 >= common:
        _split(x, y, anchors, region, found, stack)
    else:
        small = size <= 4 * ROUND_EDITS
        if common and (small or (4 * common >= size and 2 * len(unique) <= common)):
            diff_rounds(x, y, region, found)


def _half_match(
    x: Sequence[object], y: Sequence[object], region: tuple[int, int, int, int], least: int = 64
) -> Match | None:
    """A run common to both sides, unique on each and at least half the longer side, or None.

    diff-match-patch's half-match: such a run holds a quarter of the longer side that starts
    at its quarter or its middle, so two ``str.find`` calls (C speed) find it; a sparse change
    in a long region is split in linear time, before any per-line work. Taken only when
    unique (a repetitive region is left to the line-by-line steps).
    """
    alo, ahi, blo, bhi = region
    if not isinstance(x, str) or not isinstance(y, str) or min(ahi - alo, bhi - blo) < least:
        return None
    swap = ahi - alo < bhi - blo
    (long, llo, lhi), (short, slo, shi) = (
        ((y, blo, bhi), (x, alo, ahi))
        if swap
        else (
            (x, alo, ahi),
            (y, blo, bhi),
        )
    )
    quarter = (lhi - llo) // 4
    for seed_at in (llo + quarter, llo + 2 * quarter):
        seed = long[seed_at : seed_at + quarter]
        at = short.find(seed, slo, shi)
        if at < 0 or short.find(seed, at + 1, shi) >= 0 or long.find(seed, llo, lhi) != seed_at:
            continue
        if long.find(seed, seed_at + 1, lhi) >= 0:
            continue
        before = common_tail(long, short, seed_at, at, min(seed_at - llo, at - slo))
        after = common_head(
            long, short, seed_at + quarter, at + quarter, min(lhi - seed_at, shi - at) - quarter
        )
        if before + quarter + after >= (lhi - llo + 1) // 2:
            i, j = (at, seed_at) if swap else (seed_at, at)
            return i - before, j - before, before + quarter + after
    return None


def _anchors(
    xl: list[int],
    yl: list[int],
    region: tuple[int, int, int, int],
    unique: set[int],
) -> list[tuple[int, int]]:
    """The ``unique`` lines (once on each side of ``region``): the longest run in order."""
    alo, ahi, blo, bhi = region
    if not unique:
        return []
    # compress, zip and map: C speed, no loop per line in Python.
    in_b = list(compress(range(blo, bhi), map(unique.__contains__, yl[blo:bhi])))
    where = dict(zip(map(yl.__getitem__, in_b), in_b, strict=True))
    in_a = list(compress(range(alo, ahi), map(unique.__contains__, xl[alo:ahi])))
    to_b = list(map(where.__getitem__, map(xl.__getitem__, in_a)))
    pairs = list(zip(in_a, to_b, strict=True))
    if to_b == sorted(to_b):
        return pairs
    # Patience sorting: tails[k] ends the best increasing run of length k + 1 so far.
    tails: list[int] = []
    tail_pair: list[int] = []
    back = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_pair.append(n)
        else:
            tails[k], tail_pair[k] = j, n
        back[n] = tail_pair[k - 1] if k else -1
    run: list[tuple[int, int]] = []
    n = tail_pair[-1]
    while n >= 0:
        run.append(pairs[n])
        n = back[n]
    return run[::-1]


def _kept(anchors: list[tuple[int, int]], region: tuple[int, int, int, int]) -> int:
    """The most lines an alignment through ``anchors`` can keep: a bound to check them by.

    Patience's known failure: in a repetitive region one unique line that moved (a header
    from the top to the bottom) becomes the only anchor, and every repeated line around it is
    replaced. Anchors are used when they can keep (nearly) as many lines as the region has in
    common; otherwise the region goes to the Myers rounds, which find the few edits.
    """
    alo, ahi, blo, bhi = region
    kept = len(anchors)
    i0, j0 = alo, blo
    for i, j in [*anchors, (ahi, bhi)]:
        kept += min(i - i0, j - j0)
        i0, j0 = i + 1, j + 1
    return kept


def _split(
    x: Sequence[object],
    y: Sequence[object],
    anchors: list[tuple[int, int]],
    region: tuple[int, int, int, int],
    found: list[Match],
    stack: list[tuple[int, int, int, int]],
) -> None:
    """Match the anchors; queue the gaps before, between and after them.

    A gap of equal size and equal lines (a repeated line between two anchors, the common case
    in code: blank lines, braces) is matched here, not queued.
    """
    alo, ahi, blo, bhi = region
    run_i, run_j, size = alo, blo, 0  # the matched run ending where the next gap starts
    for i, j in [*anchors, (ahi, bhi)]:
        i0, j0 = run_i + size, run_j + size
        if i - i0 == j - j0 and x[i0:i] == y[j0:j]:
            size += i - i0 + (i < ahi)
            continue
        if size:
            found.append((run_i, run_j, size))
        stack.append((i0, i, j0, j))
        run_i, run_j, size = i, j, int(i < ahi)
    if size:
        found.append((run_i, run_j, size))


def _merged(found: list[Match]) -> list[Match]:
    """``found`` in order, touching matches joined."""
    out: list[Match] = []
    for i, j, size in sorted(found):
        if out and out[-1][0] + out[-1][2] == i and out[-1][1] + out[-1][2] == j:
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + size)
        else:
            out.append((i, j, size))
    return out


def line_opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """The opcodes turning lines ``a`` into lines ``b``, as ``SequenceMatcher.get_opcodes``."""
    x, y = tokens(a, b)
    ops: list[Opcode] = []
    i = j = 0
    for mi, mj, size in [*line_matches(x, y), (len(a), len(b), 0)]:
        if i < mi and j < mj:
            ops.append(("replace", i, mi, j, mj))
        elif i < mi:
            ops.append(("delete", i, mi, j, mj))
        elif j < mj:
            ops.append(("insert", i, mi, j, mj))
        if size:
            ops.append(("equal", mi, mi + size, mj, mj + size))
        i, j = mi + size, mj + size
    return ops


def changed_line_spans(a: str, b: str) -> list[tuple[int, int, int, int]]:
    """The whole-line spans of ``a`` that differ from ``b``: ``(a_start, a_end, b_start, b_end)``.

    In order, apart, each to be replaced by its span of ``b``. The texts are first split at
    long common runs found on the characters (``_text_regions``), so the lines of a long
    unchanged stretch are never split or hashed; each remaining region gets ``line_opcodes``.
    """
    out: list[tuple[int, int, int, int]] = []
    for alo, ahi, blo, bhi in _text_regions(a, b):
        lines_a, lines_b = _lines(a[alo:ahi]), _lines(b[blo:bhi])
        starts_a = list(accumulate(map(len, lines_a), initial=alo))
        starts_b = list(accumulate(map(len, lines_b), initial=blo))
        out += [
            (starts_a[i1], starts_a[i2], starts_b[j1], starts_b[j2])
            for tag, i1, i2, j1, j2 in line_opcodes(lines_a, lines_b)
            if tag != "equal"
        ]
    return out


def _lines(text: str) -> list[str]:
    """``text`` in lines with their breaks; a final empty line after a final break."""
    if not any(c in text for c in _OTHER_BREAKS):  # splitlines: C speed, exact without these
        lines = text.splitlines(keepends=True)
    else:
        lines = _LINE.findall(text)
    if not lines or lines[-1][-1] in "\r\n":
        lines.append("")
    return lines


def _text_regions(a: str, b: str) -> list[tuple[int, int, int, int]]:
    r"""``a`` and ``b`` cut into regions at common runs of whole lines, found as characters.

    A run is a half-match on the characters, cut to the lines it holds whole: from just after
    its first ``\n`` to just after its last (a ``\n`` ends a line in both texts whatever
    follows, so the cuts are line starts on both sides, never inside a CRLF). Text outside the
    regions is equal; every region starts and ends at a line start or an end of the text.
    """
    out: list[tuple[int, int, int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        run = _half_match(a, b, (alo, ahi, blo, bhi), TEXT_SPLIT_CHARS) or _seeded_run(
            a, b, (alo, ahi, blo, bhi)
        )
        first = a.find("\n", run[0], run[0] + run[2]) + 1 if run else 0
        last = a.rfind("\n", first, run[0] + run[2]) + 1 if run and first else 0
        if not run or not first < last:
            out.append((alo, ahi, blo, bhi))
            continue
        shift = run[1] - run[0]
        stack += [(last, ahi, last + shift, bhi), (alo, first, blo, first + shift)]
    return sorted(out)


def _seeded_run(a: str, b: str, region: tuple[int, int, int, int]) -> Match | None:
    """A long common run of characters, unique on both sides, found from a seed.

    When no run holds half the region (changes spread over it), pieces of ``a`` (8 of a
    sixteenth, then 16 of a 128th, evenly spread) are looked for in ``b``; a seed found once
    on each side, extended both ways, is taken when it is longer than its shift from the
    region's diagonal (a block moved far is no anchor: its own lines are better replaced than
    everything around it). A failed seed costs one ``str.find`` over the region.
    """
    alo, ahi, blo, bhi = region
    n = ahi - alo
    for parts, seeds in SEEDS:
        size = min(n, bhi - blo) // parts
        if size < TEXT_SPLIT_CHARS // 4:
            return None
        for part in range(seeds):
            at = alo + (2 * part + 1) * n // (2 * seeds)
            seed = a[at : at + size]
            j = b.find(seed, blo, bhi)
            if j < 0 or b.find(seed, j + 1, bhi) >= 0 or a.find(seed, at + 1, ahi) >= 0:
                continue
            if a.find(seed, alo, at + size - 1) >= 0:  # an occurrence that starts before
                continue
            before = common_tail(a, b, at, j, min(at - alo, j - blo))
            after = common_head(a, b, at + size, j + size, min(ahi - at, bhi - j) - size)
            if before + size + after > abs((j - blo) - (at - alo)):
                return at - before, j - before, before + size + after
    return None
