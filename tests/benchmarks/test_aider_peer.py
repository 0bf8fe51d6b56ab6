"""aider's settings and what the agent-task harness hands it (no model, no aider process).

The test command aider gets is run for real on a bugfix task: it fails on the starting files
and passes on the solution, as the checker's own test run does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.agent_tasks.aider import (
    AiderTaskResult,
    changed_files,
    init_repo,
    markdown,
    pytest_command,
    task_spec,
)
from benchmarks.agent_tasks.checks import PYTEST_ENV
from benchmarks.agent_tasks.compare import row
from benchmarks.agent_tasks.run import Variant, build_report
from benchmarks.agent_tasks.tasks import load_tasks
from benchmarks.aider_peer.harness import AiderSetup, aider_args, aider_env, write_settings


@pytest.fixture
def setup(tmp_path: Path) -> AiderSetup:
    settings, metadata = write_settings(tmp_path, model_name="m", ctx_size=8192, max_tokens=1024)
    return AiderSetup(tmp_path, "http://127.0.0.1:1", "openai/m", settings, metadata)


def test_aider_is_kept_off_the_network_and_out_of_the_persons_home(
    tmp_path: Path, setup: AiderSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    [entry] = json.loads(setup.settings.read_text())
    assert entry["name"] == "openai/m" and entry["edit_format"] == "whole"
    assert entry["extra_params"] == {"max_tokens": 1024}
    assert json.loads(setup.metadata.read_text())["openai/m"]["max_input_tokens"] == 8192
    args = aider_args(setup, tmp_path, 600)
    for flag in ("--no-check-update", "--analytics-disable", "--no-show-model-warnings"):
        assert flag in args
    assert args[args.index("--openai-api-base") + 1] == "http://127.0.0.1:1/v1"
    assert args[args.index("--edit-format") + 1] == "whole"
    # HumanEval's runs: no git, no test runs of aider's own (the tests are hidden).
    assert "--no-git" in args and "--no-auto-test" in args and "--test-cmd" not in args
    monkeypatch.setenv("AIDER_MODEL", "elsewhere")
    env = aider_env(tmp_path / "home")
    assert env["HOME"] == str(tmp_path / "home") and "AIDER_MODEL" not in env
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def _run_tests(command: str, workspace: Path) -> int:
    done = subprocess.run(
        command, shell=True, cwd=workspace, env={**aider_env(workspace / ".home"), **PYTEST_ENV}
    )
    return done.returncode


def test_a_bugfix_task_gives_aider_the_project_its_request_and_its_test_loop(
    tmp_path: Path, setup: AiderSetup
) -> None:
    [task] = load_tasks(["b04"], "bugfix")
    workspace = task.copy_workspace(tmp_path / "workspace")
    init_repo(workspace)
    spec = task_spec(
        setup, task, workspace=workspace, logs=tmp_path, timeout=300, python=sys.executable
    )
    assert spec["files"] == ["conftest.py", "paginate.py", "tests/test_paginate.py"]
    assert spec["message"] == task.text  # as the person typed it, no benchmark notes
    assert spec["tries"] == 1 and spec["notes"] is False and "judge" not in spec
    args = spec["aider_args"]
    assert args[args.index("--test-cmd") + 1] == pytest_command(sys.executable)
    assert "--auto-test" in args and "--no-auto-test" not in args
    assert "--git" in args and "--no-auto-commits" in args and "--no-git" not in args
    assert changed_files(workspace) == []
    # The command aider runs is the project's real test run: red at the start, green when fixed.
    assert _run_tests(pytest_command(sys.executable), workspace) == 1
    shutil.copytree(task.solution, workspace, dirs_exist_ok=True)
    assert _run_tests(pytest_command(sys.executable), workspace) == 0
    assert changed_files(workspace) == ["modified paginate.py"]
    assert task.check(workspace).passed


def test_the_report_reads_as_a_cadenza_run() -> None:
    result = AiderTaskResult(
        task="b04_pagination_off_by_one",
        kind="bugfix",
        success=True,
        check_reason="ok",
        stop_reason="done",
        steps=3,
        wall_s=42.0,
        total_s=50.0,
        tokens={"requests": 3, "completion_tokens": 600},
        reflections=1,
    )
    report = build_report(
        model="local/qwen2.5-coder-1.5b",
        variant=Variant(name="aider", description="aider"),
        max_steps=None,
        timeout=300,
        date="2026-01-01T00:00:00+00:00",
        machine={"nproc": 2, "cpu": "x", "loadavg_start": [1.0, 1.0, 1.0]},
        planned=1,
        results=[result],
        task_set="bugfix",
    )
    assert report["summary"]["done"] == 1 and report["summary"]["median_wall_s"] == 42.0
    assert report["summary"]["narration_rate"] is None  # aider has no narration to count
    assert "| aider | 1/1 |" in row(report)
    table = markdown(report)
    assert "| b04_pagination_off_by_one | yes | done | 42 | 3 | 1 | 600 | ok |" in table
    assert "**1/1**" in table and "med 42.0" in table
