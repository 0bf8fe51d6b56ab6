"""Module size: warn over 400 lines, fail over 600 (run by ``.ci/run``).

Held to it: the Python package (``server/cadenza``), the VS Code extension's TypeScript
(``clients/vscode/src``) and the Neovim plugin's Lua (``clients/nvim/lua``). Over 400 lines a
module deserves a look (does it hold more than one behaviour?); over 600 it fails. A cohesive
module is not split just to pass the check: split along behaviours, never into ``_part2``.
Prints every module over the warning line, largest first, with its line count.
"""

from __future__ import annotations

import sys
from pathlib import Path

WARN_LINES = 400
MAX_LINES = 600
REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "server" / "cadenza"
# (folder, file pattern): every module the limit holds.
SOURCES: tuple[tuple[Path, str], ...] = (
    (PACKAGE, "*.py"),
    (REPO / "clients" / "vscode" / "src", "*.ts"),
    (REPO / "clients" / "nvim" / "lua", "*.lua"),
)


def oversized(
    root: Path = PACKAGE, limit: int = MAX_LINES, pattern: str = "*.py"
) -> list[tuple[int, Path]]:
    """``(lines, path)`` of each ``pattern`` file under ``root`` over ``limit``, largest first."""
    found: list[tuple[int, Path]] = []
    for path in sorted(root.rglob(pattern)):
        with path.open("rb") as fh:
            lines = sum(1 for _ in fh)
        if lines > limit:
            found.append((lines, path))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def main() -> int:
    """Print the modules over the warning line; 1 when any is over the gate."""
    found: list[tuple[int, Path]] = []
    for root, pattern in SOURCES:
        if not root.is_dir():
            print(f"{root.relative_to(REPO)}: missing, so not checked", file=sys.stderr)
            return 1
        found.extend(oversized(root, WARN_LINES, pattern))
    found.sort(key=lambda item: (-item[0], item[1]))
    failed = [item for item in found if item[0] > MAX_LINES]
    for lines, path in found:
        verdict = "over the gate" if lines > MAX_LINES else "worth a look"
        print(f"{path.relative_to(REPO)}: {lines} lines ({verdict})")
    if failed:
        print(f"{len(failed)} module(s) over {MAX_LINES} lines: split them along behaviours")
        return 1
    roots = ", ".join(f"{root.relative_to(REPO)} ({pattern})" for root, pattern in SOURCES)
    print(f"every module under {roots} is at most {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
