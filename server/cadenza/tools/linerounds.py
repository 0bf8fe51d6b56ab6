"""Greedy edit-distance rounds for a repetitive region of a line diff (``linediff``).

Myers' ``O(ND)`` greedy algorithm ("An O(ND) difference algorithm and its variations",
1986) with Ukkonen's replacement step: step ``d`` holds, per diagonal, the furthest point
reached with ``d`` line edits (a line replaced, deleted or inserted), equal runs followed at
C speed. A replacement costs one edit, as much as an insertion: with insertions and deletions
only, a changed line in a file of identical lines is as cheap as an insertion here and a
deletion at the end, one hunk as long as all the changes.

The search goes in rounds of at most ``ROUND_EDITS`` edits: a round ends at its
furthest-reaching point and the next starts there, so the work is ``O(D * ROUND_EDITS)``
steps for ``D`` edits, not ``O(D ** 2)``; each round's path is the shortest to its end point.
A region whose rounds outgrow ``WORK_PER_LINE`` steps a line (plus ``BASE_WORK``) keeps the
rest as one hunk.
"""

from __future__ import annotations

from collections.abc import Sequence

Match = tuple[int, int, int]
"""``a[i:i + size] == b[j:j + size]``: ``(i, j, size)``."""

ROUND_EDITS = 64
"""Edits per round: a round costs ``ROUND_EDITS ** 2`` steps at most."""
WORK_PER_LINE = 2
"""Steps allowed per line of a region (plus ``BASE_WORK``) before the rest is one hunk."""
BASE_WORK = 50_000


def common_head(x: Sequence[object], y: Sequence[object], i: int, j: int, limit: int) -> int:
    """How many items ``x[i:]`` and ``y[j:]`` have in common at their start (at most ``limit``)."""
    if limit <= 0 or x[i] != y[j]:
        return 0
    low, step = 1, 1  # x[i:i + low] == y[j:j + low]
    while low < limit:
        high = min(low + step, limit)
        if x[i + low : i + high] != y[j + low : j + high]:
            limit = high - 1
            break
        low, step = high, step * 2
    while low < limit:  # x[i:i + low] equal; the common run is at most limit
        mid = (low + limit + 1) // 2
        if x[i + low : i + mid] == y[j + low : j + mid]:
            low = mid
        else:
            limit = mid - 1
    return low


def common_tail(x: Sequence[object], y: Sequence[object], i: int, j: int, limit: int) -> int:
    """How many items ``x[:i]`` and ``y[:j]`` have in common at their end (at most ``limit``)."""
    if limit <= 0 or x[i - 1] != y[j - 1]:
        return 0
    low, step = 1, 1  # x[i - low:i] == y[j - low:j]
    while low < limit:
        high = min(low + step, limit)
        if x[i - high : i - low] != y[j - high : j - low]:
            limit = high - 1
            break
        low, step = high, step * 2
    while low < limit:
        mid = (low + limit + 1) // 2
        if x[i - mid : i - low] == y[j - mid : j - low]:
            low = mid
        else:
            limit = mid - 1
    return low


def diff_rounds(
    x: Sequence[object], y: Sequence[object], region: tuple[int, int, int, int], found: list[Match]
) -> None:
    """Diff ``region`` by Myers rounds; what is left when the work budget runs out stays a hunk."""
    alo, ahi, blo, bhi = region
    budget = WORK_PER_LINE * (ahi - alo + bhi - blo) + BASE_WORK
    while alo < ahi and blo < bhi and budget > 0:
        common = common_head(x, y, alo, blo, min(ahi - alo, bhi - blo))
        if common:
            found.append((alo, blo, common))
            alo, blo = alo + common, blo + common
            continue
        alo, blo, work = _round(x, y, (alo, ahi, blo, bhi), found)
        budget -= work


def _step(v: list[int], off: int, k: int, n: int, m: int) -> tuple[int, int]:
    """Where diagonal ``k`` (``x - y``) starts in this step: ``(x, move)``, ``x == -1`` if nowhere.

    ``v`` holds the previous step's furthest ``x`` per diagonal (-1: not reached). The move is
    0 for a replaced line (from ``k``), 1 for a deleted one (from ``k - 1``), 2 for an inserted
    one (from ``k + 1``); the furthest start wins, a replacement first on a tie, so a changed
    line is one replaced line, never an insertion here and a deletion far below.
    """
    best, move = -1, 0
    here, left, up = v[off + k], v[off + k - 1], v[off + k + 1]
    if 0 <= here < n and here - k < m:
        best = here + 1
    if 0 <= left < n and left + 1 > best:
        best, move = left + 1, 1
    if up >= 0 and up - k <= m and up > best:
        best, move = up, 2
    return best, move


def _round(
    x: Sequence[object], y: Sequence[object], region: tuple[int, int, int, int], found: list[Match]
) -> tuple[int, int, int]:
    """One round of the greedy diagonal edit-distance search (Myers; Ukkonen for replacements).

    Step ``d`` holds, per diagonal, the furthest point reached with ``d`` line edits (a line
    replaced, deleted or inserted); equal runs are followed at C speed.

    Returns:
        Where the round ended in ``a`` and ``b`` (the end of the region when it got there)
        and the steps it took; its matches go to ``found``.
    """
    alo, ahi, blo, bhi = region
    n, m = ahi - alo, bhi - blo
    off = ROUND_EDITS + 2
    v = [-1] * (2 * off + 1)
    v[off] = common_head(x, y, alo, blo, min(n, m))
    trace = [v]
    work = 1
    for d in range(1, ROUND_EDITS + 1):
        if abs(n - m) < d and v[off + n - m] == n:
            break
        prev, v = v, [-1] * (2 * off + 1)
        for k in range(max(-d, -m), min(d, n) + 1):
            start, _ = _step(prev, off, k, n, m)
            if 0 <= start < n and start - k < m and x[alo + start] == y[blo + start - k]:
                start += common_head(
                    x, y, alo + start, blo + start - k, min(n - start, m - start + k)
                )
            v[off + k] = start
        work += 2 * d + 1
        trace.append(v)
    if abs(n - m) < len(trace) and v[off + n - m] == n:
        return ahi, bhi, _traced(trace, (n, m), region, found) + work
    k = max(
        (k for k in range(-ROUND_EDITS, ROUND_EDITS + 1) if v[off + k] >= 0),
        key=lambda k: (2 * v[off + k] - k, -abs(k - (n - m))),
    )
    end = (v[off + k], v[off + k] - k)
    return alo + end[0], blo + end[1], _traced(trace, end, region, found) + work


def _traced(
    trace: list[list[int]],
    end: tuple[int, int],
    region: tuple[int, int, int, int],
    found: list[Match],
) -> int:
    """Follow the path to ``end`` back through ``trace``; its equal runs go to ``found``.

    Each step's start is found again by ``_step`` on the step before, as the round chose it.
    """
    alo, ahi, blo, bhi = region
    off = ROUND_EDITS + 2
    x, y = end
    for d in range(len(trace) - 1, 0, -1):
        k = x - y
        start, move = _step(trace[d - 1], off, k, ahi - alo, bhi - blo)
        if x > start:
            found.append((alo + start, blo + start - k, x - start))
        x, y = start - (move < 2), start - k - (move != 1)
    if x:
        found.append((alo, blo, x))
    return len(trace)
