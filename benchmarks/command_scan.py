"""What noting the workspace around a command costs (``tools.workspace_scan``), in one run.

``python benchmarks/command_scan.py`` makes workspaces of 1,000, 5,000 and 15,000 text
files (about 3.4 KB each, in folders of 50, plus a ``node_modules`` folder it skips) and times,
the best of a few repeats, in the same run:

- ``bash -c true``: a command that does nothing, started as ``run_command`` starts it (the
  cost a command has anyway);
- ``scan cold``: the note before a session's first command (every file read);
- ``scan again``: the note before a later command (``previous``: unchanged files not read);
- ``compare``: the comparison after a command that modified one file and created one.

Reported as milliseconds and as ratios to ``bash -c true``. Results go to
``benchmarks/results/command-scan-DATE.json``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from benchmarks.common import save, table
from cadenza.tools.workspace_scan import WorkspaceScan, changes, scan

REPEATS = 5
LINE = "    value = compute(value, 17)  # a line of code, about forty bytes\n"


def make(root: Path, files: int) -> None:
    """``files`` text files of about 3.4 KB in folders of 50, and a skipped dependency folder."""
    body = LINE * 48
    for i in range(files):
        folder = root / f"pkg{i // 50:04}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:05}.py").write_text(f"# {i}\n{body}")
    deps = root / "node_modules" / "dep"
    deps.mkdir(parents=True)
    for i in range(500):
        (deps / f"f{i}.js").write_text(body)


def best(fn: Callable[[], Any], repeats: int = REPEATS) -> float:
    """The best wall time of ``repeats`` calls, in milliseconds."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return round(min(times) * 1000, 1)


def measure(files: int) -> dict[str, Any]:
    """One workspace of ``files`` files: the four timings."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        make(root, files)
        true = best(lambda: subprocess.run(["bash", "-c", "true"], check=True, cwd=root))

        def cold() -> WorkspaceScan:
            found = scan(root)
            assert isinstance(found, WorkspaceScan), found
            return found

        cold_ms = best(cold)
        first = cold()
        again_ms = best(lambda: scan(root, previous=first))
        target = root / "pkg0000" / "mod00000.py"

        def compare() -> None:
            target.write_text(target.read_text() + "# changed\n")
            info = target.stat()
            os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
            (root / "new.py").write_text("x = 1\n")
            diff = changes(first)
            assert [c.path for c in diff.changes] == ["new.py", "pkg0000/mod00000.py"]
            (root / "new.py").unlink()

        compare_ms = best(compare)
        kept = sum(len(s.data or b"") for s in first.files.values())
    return {
        "files": files,
        "text_mb": round(kept / 1e6, 1),
        "bash_true_ms": true,
        "scan_cold_ms": cold_ms,
        "scan_again_ms": again_ms,
        "compare_ms": compare_ms,
    }


def main() -> None:
    started = time.monotonic()
    rows = [measure(n) for n in (1_000, 5_000, 15_000)]
    print(
        table(
            ["files", "text MB", "bash -c true", "scan cold", "scan again", "compare"],
            [
                [
                    r["files"],
                    r["text_mb"],
                    f"{r['bash_true_ms']} ms",
                    f"{r['scan_cold_ms']} ms ({r['scan_cold_ms'] / r['bash_true_ms']:.1f}×)",
                    f"{r['scan_again_ms']} ms ({r['scan_again_ms'] / r['bash_true_ms']:.1f}×)",
                    f"{r['compare_ms']} ms ({r['compare_ms'] / r['bash_true_ms']:.1f}×)",
                ]
                for r in rows
            ],
        )
    )
    print(save("command-scan", {"rows": rows}, started))


if __name__ == "__main__":
    main()
