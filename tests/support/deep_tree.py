"""A folder nested deeper than the interpreter's recursion limit, made and removed safely.

Made and removed level by level: ``mkdir(parents=True)`` and ``shutil.rmtree`` themselves
recurse once per level, so pytest's own clean-up of old temporary folders would fail on it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def deep_folder(root: Path) -> Iterator[str]:
    """A folder ``sys.getrecursionlimit() + 100`` levels below ``root``; removed afterwards."""
    levels = [str(root)]
    for _ in range(sys.getrecursionlimit() + 100):
        levels.append(os.path.join(levels[-1], "a"))
        os.mkdir(levels[-1])
    try:
        yield levels[-1]
    finally:
        for folder in reversed(levels[1:]):
            for name in os.listdir(folder):
                if not os.path.isdir(os.path.join(folder, name)):
                    os.unlink(os.path.join(folder, name))
            os.rmdir(folder)
