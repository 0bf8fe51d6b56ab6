"""The agent task runner end to end: three tasks with SmolLM2-135M through the real server.

Structural only (the small model rarely solves anything): the command completes, writes one
JSON report with the run's metadata, and every task's result has every field, a valid stop
reason and counts that agree with the session's steps. Marked like the other end-to-end tests:
it needs the pulled model (``cadenza models pull smollm2-135m``) and starts a real llama-server.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.agent_tasks.run import VALID_STOP_REASONS, TaskResult

from tests.e2e.support import MODEL, ROOT, require_model

pytestmark = pytest.mark.e2e

TASKS = ("t01_rename_function", "t11_js_rename_variable")
MAX_STEPS = 1
MAX_TOKENS = 64
"""The model's work is bounded by steps and tokens (a babbling reply is cut after 64 tokens,
its repair after 128), not by the clock: at most 64 + 128 tokens per task. Two tasks (Python,
JavaScript) and one step each keep this structural test to a few minutes of the CI run."""
TASK_TIMEOUT_S = 600.0
"""A generous wait, far above what the bounded work takes even on 2 busy cores (SmolLM2: about
10-25 s a step there): a task that still runs out of it ends as ``timeout`` (cancelled,
counted from its transcript), a valid result, never a failure of the test."""


def test_three_tasks_through_the_runner(tmp_path: Path) -> None:
    require_model()
    results_dir = tmp_path / "results"
    env = {k: v for k, v in os.environ.items() if k != "CADENZA_MODEL"}
    command = [
        sys.executable,
        "-m",
        "benchmarks.agent_tasks.run",
        "--model",
        MODEL,
        "--tasks",
        ",".join(TASKS),
        "--max-steps",
        str(MAX_STEPS),
        "--max-tokens",
        str(MAX_TOKENS),
        "--timeout",
        str(TASK_TIMEOUT_S),
        "--results-dir",
        str(results_dir),
    ]
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=len(TASKS) * (TASK_TIMEOUT_S + 60),
    )
    print(done.stdout)
    assert done.returncode == 0, done.stderr[-2000:]

    saved = list(results_dir.glob("*.json"))
    assert len(saved) == 1, saved
    assert str(saved[0]) in done.stdout.replace("\n", "")
    report = json.loads(saved[0].read_text(encoding="utf-8"))
    assert report["model"] == MODEL
    assert report["variant"] == "default"
    assert report["max_steps"] == MAX_STEPS
    assert isinstance(report["commit"], str) and len(report["commit"]) == 40
    assert report["machine"]["nproc"] >= 1 and report["machine"]["cpu"]
    assert report["date"].endswith("+00:00")
    assert report["summary"]["tasks"] == len(TASKS)
    assert report["complete"] is True
    assert set(report["unavailable"]) >= {"contract_misses", "tokens"}

    fields = {f.name for f in dataclasses.fields(TaskResult)}
    assert [r["task"] for r in report["results"]] == list(TASKS)
    for result in report["results"]:
        assert set(result) == fields, set(result) ^ fields
        assert result["stop_reason"] in VALID_STOP_REASONS, result
        assert isinstance(result["success"], bool)
        assert result["check_reason"]
        assert 0 <= result["repairs_recovered"] <= result["repairs"] <= result["steps"], result
        assert 0 <= result["steps"] <= MAX_STEPS, result
        if result["stop_reason"] in ("end_turn", "max_steps", "needs_user_input"):
            # One model reply per step, plus one per repair (a reply of the default text format
            # may hold no call: it ends the turn).
            assert result["error"] is None
            assert result["replies"] == result["steps"] + result["repairs"] >= 1, result
            assert result["tool_calls"] >= 0
            assert result["repeated_calls"] <= result["tool_calls"]
            assert 0 <= result["narration_turns"] <= result["replies"]
            assert result["tokens"] is not None
            assert result["tokens"]["requests"] == result["replies"]
            assert result["tokens"]["completion_tokens"] > 0
        if result["stop_reason"] == "timeout":
            assert result["error"] and result["replies"] is not None, result
        if result["success"]:
            assert result["files_changed"], result
