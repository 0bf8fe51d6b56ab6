"""Summarize a py-spy ``raw`` (collapsed stacks) profile: top functions by self and total time."""

from __future__ import annotations

import argparse
import collections
from pathlib import Path


def summarize(path: Path, top: int = 25, contains: str = "") -> str:
    self_count: collections.Counter[str] = collections.Counter()
    total_count: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = stack.split(";")
        if contains and not any(contains in f for f in frames):
            continue
        samples += n
        self_count[frames[-1]] += n
        for frame in set(frames):
            total_count[frame] += n
    out = [f"samples: {samples}", "", "total%  self%  function"]
    for frame, n in total_count.most_common(top):
        out.append(f"{100 * n / samples:5.1f}  {100 * self_count[frame] / samples:5.1f}  {frame}")
    out += ["", "self% function (top self)"]
    for frame, n in self_count.most_common(top):
        out.append(f"{100 * n / samples:5.1f}  {frame}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("raw", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--contains", default="")
    args = parser.parse_args()
    print(summarize(args.raw, args.top, args.contains))


if __name__ == "__main__":
    main()
