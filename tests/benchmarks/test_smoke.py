"""The benchmarks' smoke mode runs end to end and records what it should (never timings).

``python benchmarks/run.py --smoke`` drives the real server through the headless client
against the instant fake model. Only structure and counts are checked: times depend on the
machine's load, and speed is judged by same-run ratios in the benchmarks (docs/lab/performance.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOUND_S = 1200
"""A generous bound (a hang, not a speed check): it took 8.5 minutes on 2 cores at load 5-9."""


def test_smoke_mode_runs_and_is_sane(tmp_path: Path) -> None:
    # Its own process group, so a hang leaves no fake model or server behind.
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--smoke", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=BOUND_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, stdout[-2000:] + stderr[-2000:]
    [saved] = list(tmp_path.glob("smoke-*.json"))
    record = json.loads(saved.read_text())
    assert {"machine", "command", "date", "commit"} <= record.keys()
    results = record["results"]

    step = results["step"]["step"]
    assert step["stop_reasons"] == {"max_steps": 1}
    assert step["step_overhead_ms"]["n"] >= 150
    # Streamed replies are read to the end: the connection is reused, not one per request.
    assert step["model_connections"] <= 5
    assert step["files_edited_as_scripted"] == "1/1"  # every edit_file went through the client

    # Both faces with the editor round trip (applyEdit; fs/* answered by the ACP client),
    # server CPU per step measured between the first and the last model request.
    faces = {r["face"]: r for r in results["steps"]["results"]}
    assert faces.keys() == {"lsp", "acp"}
    for face in faces.values():
        assert face["step_overhead_ms"]["n"] == 19
        assert face["server_cpu_ms_per_step"] >= 0

    for level in results["concurrency"]["levels"]:
        assert level["stop_reasons"] == {"max_steps": level["sessions"]}
        assert level["files_edited_as_scripted"] == f"{level['sessions']}/{level['sessions']}"

    assert results["startup"]["spawn_to_initialize_ms"]["n"] >= 1
    edits = results["edits"]["end_to_end"][0]
    assert edits["stop_reasons"] == {"max_steps": 1}
    assert edits["edit_step_ms"]["n"] >= 1
    assert all(case["best_of_3_ms"] > 0 for case in results["edits_micro"]["text_edits"])

    memory = results["memory"]
    # Every session made its turn (1 warm-up + 20, 2 requests each).
    assert memory["model_requests"] == 2 * 21
    assert isinstance(memory["idle_session_kb"], (int, float))
