"""Compare saved runs of the agent task set: one row per report, as a Markdown table.

    python -m benchmarks.agent_tasks.compare benchmarks/agent_tasks/results/*.json

Columns: tasks done, done per minute of session wall time (the default model is chosen by
it: on two cores a model that succeeds more often but much more slowly may be worse), median
seconds, narration turns per reply, repeated calls per call, how sessions ended (``max_steps``
via repeats is what the stuck limit prevents), cut replies, repairs (recovered/fired).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _load(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def row(report: dict[str, Any]) -> str:
    """One Markdown row for a saved report."""
    s = report["summary"]
    stops = ", ".join(f"{k} {v}" for k, v in sorted(s["stop_reasons"].items()))
    repairs = f"{s.get('repairs_recovered', 0)}/{s['repairs']}" if "repairs" in s else "n/a"
    per_minute = s.get("done_per_minute")
    load = report["machine"].get("loadavg_start") or [None]
    return (
        f"| {report['model'].split('/')[-1]} | {report['variant']} | {s['done']}/{s['tasks']} "
        f"| {'n/a' if per_minute is None else f'{per_minute:.2f}'} | {s['median_wall_s']} "
        f"| {_rate(s['narration_rate'])} | {_rate(s['repeat_rate'])} | {stops} "
        f"| {s['cut_replies']} | {repairs} | {_load(load[0])} |"
    )


HEADER = (
    "| model | variant | done | done/min | median s | narration | repeats | ends | cut "
    "| repaired | load |\n|---|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agent_tasks.compare")
    parser.add_argument("reports", nargs="+", type=Path)
    args = parser.parse_args(argv)
    print(HEADER)
    for path in args.reports:
        print(row(json.loads(path.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
