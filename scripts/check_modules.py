"""Fail when a module under ``server/cadenza`` is over 400 lines (issue 16; run by ``.ci/run``).

A module that size holds more than one behaviour: split it along behaviours, never into
``_part2``. Prints every offender, largest first, with its line count.
"""

from __future__ import annotations

import sys
from pathlib import Path

MAX_LINES = 400
REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "server" / "cadenza"


def oversized(root: Path = PACKAGE, limit: int = MAX_LINES) -> list[tuple[int, Path]]:
    """``(lines, path)`` of every ``.py`` file under ``root`` over ``limit`` lines, largest first."""
    found: list[tuple[int, Path]] = []
    for path in sorted(root.rglob("*.py")):
        with path.open("rb") as fh:
            lines = sum(1 for _ in fh)
        if lines > limit:
            found.append((lines, path))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def main() -> int:
    """Print the oversized modules; 1 when there are any."""
    found = oversized()
    for lines, path in found:
        print(f"{path.relative_to(REPO)}: {lines} lines (at most {MAX_LINES})")
    if found:
        print(f"{len(found)} module(s) over {MAX_LINES} lines: split them along behaviours")
        return 1
    print(f"every module under {PACKAGE.relative_to(REPO)} is at most {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
