"""Edit hunks before and after the line diff of ``tools/linediff.py``, in one run.

``python benchmarks/hunks.py [--before COMMIT]`` times ``cadenza.lsp.edits.text_edits``
(UTF-16 positions) of this tree and of ``COMMIT``'s ``server/cadenza/lsp/edits.py`` (taken
with ``git show`` and imported from a temporary file; it needs only ``cadenza.tools.textfile``,
which both share), alternating, on files of 1,000, 10,000 and 100,000 lines: two lines changed
far apart (at 1 % and 99 %), and k = 1, 10, 100, 1,000 lines changed at random places; also
a repetitive file (five lines repeated) and a file of one line repeated. For each it reports
the best time of the repeats, the number of ``TextEdit``s, and the largest one: old lines
spanned, characters replaced and characters of its new text. (Positions are UTF-16; the
text is ASCII, so characters are code units.) Results go to ``benchmarks/results/hunks-DATE.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from benchmarks.common import REPO, save, table
from cadenza.lsp import edits as after
from cadenza.tools.textfile import LINE_BREAK

BEFORE = "7a633a5"
"""The last commit with the 20,000-line fallback (``MAX_DIFF_LINES``)."""

TextEdits = Callable[[str, str, PositionCodec], list[types.TextEdit | types.AnnotatedTextEdit]]


def old_module(commit: str) -> ModuleType:
    """``edits.py`` as it was at ``commit``, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{commit}:server/cadenza/lsp/edits.py"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # The old module took ``changed_span`` from tools.textfile; it lives in cadenza.textio now.
    source = source.replace(
        "from cadenza.tools.textfile import LINE_BREAK, changed_span",
        "from cadenza.textio import changed_span\nfrom cadenza.tools.textfile import LINE_BREAK",
    )
    path = Path(tempfile.mkdtemp()) / "edits_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("edits_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["edits_before"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def code_lines(n: int, kind: str, rnd: random.Random) -> list[str]:
    """``n`` lines like source code (blank lines and braces repeat), or repetitive ones."""
    if kind == "five lines repeated":
        return [rnd.choice(["}\n", "\n", "    pass\n", "x = 1\n", "# -\n"]) for _ in range(n)]
    if kind == "one line repeated":
        return ["same line\n"] * n
    out = []
    for i in range(n):
        out.append(
            "\n"
            if i % 9 == 8
            else "}\n"
            if i % 9 == 7
            else f"    value_{i} = compute(value_{i - 1}, {i % 17})  # step {i}\n"
        )
    return out


def changed(lines: list[str], places: list[int]) -> str:
    """``lines`` with each line at ``places`` edited in the middle."""
    out = list(lines)
    for at in places:
        out[at] = out[at][:4] + "CHANGED " + out[at][4:]
    return "".join(out)


def measure(fn: TextEdits, old: str, new: str, repeats: int) -> dict[str, Any]:
    """Best time of ``repeats``; the edits and the largest one (old lines, old characters)."""
    codec = PositionCodec(encoding="utf-16")  # type: ignore[arg-type]
    best = float("inf")
    edits: list[types.TextEdit | types.AnnotatedTextEdit] = []
    for _ in range(repeats):
        started = time.perf_counter()
        edits = fn(old, new, codec)
        best = min(best, time.perf_counter() - started)
    starts = [0, *(m.end() for m in LINE_BREAK.finditer(old))]
    sizes = [
        (
            e.range.end.line - e.range.start.line + 1,
            starts[e.range.end.line]
            + e.range.end.character
            - starts[e.range.start.line]
            - e.range.start.character,
            len(e.new_text),
        )
        for e in edits
    ]
    lines, chars, text = max(sizes, default=(0, 0, 0))
    return {
        "ms": round(best * 1000, 1),
        "edits": len(edits),
        "lines": lines,
        "chars": chars,
        "new_chars": text,
    }


def cases() -> list[tuple[str, int, int, list[str], str]]:
    """(kind, lines, changed lines, old lines, new text) for every row."""
    out = []
    rnd = random.Random(21)
    for n in (1_000, 10_000, 100_000):
        lines = code_lines(n, "code", rnd)
        out.append(("code, 2 far apart", n, 2, lines, changed(lines, [n // 100, n - n // 100])))
        for k in (1, 10, 100, 1_000):
            if k <= n:
                places = sorted(rnd.sample(range(n), k))
                out.append((f"code, k={k}", n, k, lines, changed(lines, places)))
    for kind in ("five lines repeated", "one line repeated"):
        lines = code_lines(100_000, kind, rnd)
        for k in (2, 100):
            places = [1_000, 99_000] if k == 2 else sorted(rnd.sample(range(100_000), k))
            out.append((kind, 100_000, k, lines, changed(lines, places)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default=BEFORE, help="commit of the old edits.py")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    started = time.monotonic()
    old = old_module(args.before)
    rows, out = [], []
    for kind, n, k, lines, new in cases():
        text = "".join(lines)
        repeats = args.repeats if n <= 10_000 else max(1, args.repeats - 1)
        result = {"case": kind, "lines": n, "changed_lines": k}
        for name, fn in (("before", old.text_edits), ("after", after.text_edits)):
            result[name] = measure(fn, text, new, repeats)
        out.append(result)
        b, a = result["before"], result["after"]
        rows.append(
            [kind, n, k]
            + [f"{m['ms']}" for m in (b, a)]
            + [m["edits"] for m in (b, a)]
            + [f"{m['lines']} / {m['chars']} / {m['new_chars']}" for m in (b, a)]
        )
        print(rows[-1], flush=True)
    headers = (
        "file",
        "lines",
        "changed",
        "before ms",
        "after ms",
        "before edits",
        "after edits",
        "before largest (lines / chars / new chars)",
        "after largest (lines / chars / new chars)",
    )
    print()
    print(table(headers, rows))
    path = save("hunks", {"before_commit": args.before, "rows": out}, started)
    print(f"\nsaved {path}")


if __name__ == "__main__":
    main()
