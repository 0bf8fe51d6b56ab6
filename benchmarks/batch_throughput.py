"""``cadenza batch`` throughput: sessions per minute at 1, 2, 4, 8 concurrent sessions.

Run: ``python benchmarks/batch_throughput.py [--tasks 8] [--levels 1,2,4,8]`` (needs the
batch extra). Each level is one ``cadenza batch`` run on a fresh local Ray cluster, over
``--tasks`` tasks on small local git repositories, against the instant scripted model server
of the batch tests (tests/batch/model_server.py, its own process): each session writes one
file and ends (2 model requests). From each run's ``summary.json``:

- throughput: tasks finished per minute of batch wall time (Ray start-up excluded; it is
  reported apart as ``ray_init_s``);
- Ray + driver overhead per task: ``(wall - sum(task time)) / tasks`` at concurrency 1, where
  task time is what the worker spent (checkout, server start, session, patch);
- worker overhead per task: ``(sum(task time) - sum(session time)) / tasks``: clone, server
  start and shutdown, patch, outside the session itself.

Results go to ``benchmarks/results/batch-DATE.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import save, table  # noqa: E402

MODEL_SERVER = ROOT / "tests" / "batch" / "model_server.py"


def _repos(folder: Path, count: int) -> list[Path]:
    repos = []
    for n in range(count):
        repo = folder / f"repo{n}"
        repo.mkdir(parents=True)
        (repo / "README.md").write_text(f"repository {n}\n", encoding="utf-8")
        for args in (
            ["init", "-q"],
            ["add", "-A"],
            ["-c", "user.name=b", "-c", "user.email=b@example.org", "commit", "-qm", "init"],
        ):
            subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
        repos.append(repo)
    return repos


def _level(work: Path, env: dict[str, str], repos: list[Path], tasks: int, level: int) -> Any:
    lines = [
        json.dumps(
            {
                "id": f"c{level}-t{n}",
                "repo": str(repos[n % len(repos)]),
                "task": f"batch-write: out{n}.txt value{n}",
            }
        )
        for n in range(tasks)
    ]
    task_file = work / f"tasks-{level}.jsonl"
    task_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = work / f"out-{level}"
    command = [sys.executable, "-m", "cadenza", "batch", str(task_file), "--out", str(out)]
    command += ["--model", "openai/bench", "--max-concurrency", str(level)]
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    total = time.monotonic() - started
    if done.returncode != 0:  # a task not done is still a measurement: the table says how many
        print(f"level {level}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    if not (out / "summary.json").exists():  # Ray did not start (an overloaded machine)
        return None
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    n = len(summary["tasks"])
    return {
        "concurrency": level,
        "tasks": n,
        "done": summary["counts"].get("done", 0),
        "ray_init_s": summary["ray_init_s"],
        "batch_wall_s": summary["wall_time_s"],
        "command_wall_s": round(total, 1),
        "tasks_per_min": summary["throughput_per_min"],
        "task_time_mean_s": round(summary["task_time_sum_s"] / n, 2),
        "session_time_mean_s": round(summary["session_time_sum_s"] / n, 2),
        "ray_overhead_per_task_s": round(
            (summary["wall_time_s"] - summary["task_time_sum_s"]) / n, 2
        )
        if level == 1
        else None,
        "worker_overhead_per_task_s": round(
            (summary["task_time_sum_s"] - summary["session_time_sum_s"]) / n, 2
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--levels", default="1,2,4,8")
    args = parser.parse_args()
    started = time.monotonic()
    model = subprocess.Popen([sys.executable, str(MODEL_SERVER)], stdout=subprocess.PIPE, text=True)
    assert model.stdout is not None
    port = int(model.stdout.readline().split()[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("CADENZA_")}
    env.update(
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="x", RAY_AUTH_MODE="disabled"
    )
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="cadenza-bench-batch-") as tmp:
            work = Path(tmp)
            repos = _repos(work / "repos", 3)
            for level in (int(x) for x in args.levels.split(",")):
                row = _level(work, env, repos, args.tasks, level)
                if row is not None:
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        model.kill()
    headers = ["concurrency", "tasks", "done", "ray_init_s", "batch_wall_s", "tasks_per_min"]
    headers += ["task_time_mean_s", "session_time_mean_s", "ray_overhead_per_task_s"]
    headers += ["worker_overhead_per_task_s"]
    print(table(headers, [[row[h] for h in headers] for row in rows]))
    print(save("batch", {"levels": rows}, started))


if __name__ == "__main__":
    main()
