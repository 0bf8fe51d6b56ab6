"""Two ``cadenza run`` processes on one workspace: each keeps its own changes.

Run A edits ``notes.txt``, then runs a command that holds until the test releases it; run B
starts meanwhile and edits ``b.py`` and ``notes.txt``. Real processes (the CLI, its server),
real files, a git repository or a plain folder, a scripted model per run over loopback. What
must hold:

- B's edits wait for A's command to end (a command's window is its own), and B says whom
  it waits for;
- each run's ``--output json`` report lists only what that run wrote;
- ``cadenza undo A`` refuses while ``notes.txt`` holds B's change (naming it) and touches
  nothing; once B is undone, undoing A puts back exactly A's changes, never B's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAI, call, text

RUN_TIMEOUT_S = 120
HOLD_S = 1.5
"""Seconds B is left waiting before A's command is released."""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture(params=["git", "plain"])
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The workspace: a git repository with a commit, or a plain folder."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("x\n", encoding="utf-8")
    (root / "b.py").write_text("b = 1\n", encoding="utf-8")
    if request.param == "git":
        git(root, "init", "-q")
        git(root, "add", ".")
        git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "start")
    return root


@pytest.fixture
def models() -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    with FakeOpenAI() as first, FakeOpenAI() as second:
        yield first, second


def environment(tmp_path: Path, model: FakeOpenAI) -> dict[str, str]:
    """One person's environment (shared state folders), with this run's model server."""
    values = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "XDG_"))}
    values.update(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir(exist_ok=True)
        values[name] = str(folder)
    return values


def start_run(repo: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "cadenza", "run", "--workspace", str(repo)]
    return subprocess.Popen(
        [*command, "--model", "openai/test", "--output", "json", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )


def finish(process: subprocess.Popen[str]) -> tuple[dict[str, Any], str]:
    out, err = process.communicate(timeout=RUN_TIMEOUT_S)
    assert process.returncode == 0, err
    return json.loads(out), err


def undo(repo: Path, env: dict[str, str], session_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cadenza", "undo", session_id, "--workspace", str(repo)],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def test_two_runs_on_one_workspace_keep_their_own_changes(
    tmp_path: Path, repo: Path, models: tuple[FakeOpenAI, FakeOpenAI]
) -> None:
    model_a, model_b = models
    gate = tmp_path / "gate"  # outside the workspace: the test's signals are nobody's change
    gate.mkdir()
    held = (
        f"touch {gate}/started; while [ ! -f {gate}/release ]; do sleep 0.05; done; "
        "echo made > made.txt"
    )
    model_a.script(
        call("edit_file", {"path": "notes.txt", "old_string": "x", "new_string": "y"}, "a1"),
        call("run_command", {"command": held}, "a2"),
        text("A is done."),
    )
    model_b.script(
        call("edit_file", {"path": "b.py", "old_string": "b = 1", "new_string": "b = 2"}, "b1"),
        call("edit_file", {"path": "notes.txt", "old_string": "y", "new_string": "z"}, "b2"),
        text("B is done."),
    )
    env_a, env_b = environment(tmp_path, model_a), environment(tmp_path, model_b)
    run_a = start_run(repo, env_a, "--allow", "run_command", "task A")
    try:
        wait_for((gate / "started").exists, "A's command to start")
        run_b = start_run(repo, env_b, "task B")
        try:
            wait_for(lambda: len(model_b.requests) >= 1, "B's first model request")
            time.sleep(HOLD_S)  # B has its edit call now: it must wait for A's command
            during = read(repo / "b.py")
        finally:
            (gate / "release").touch()
            report_b, err_b = finish(run_b)
    finally:
        (gate / "release").touch()
        report_a, _ = finish(run_a)

    assert during == "b = 1\n", "B wrote inside A's command"
    assert f"session {report_a['session_id']}" in err_b  # B said whom it waited for
    assert read(repo / "b.py") == "b = 2\n" and read(repo / "notes.txt") == "z\n"
    assert read(repo / "made.txt") == "made\n"
    assert sorted(f["path"] for f in report_a["files"]) == ["made.txt", "notes.txt"]
    assert sorted(f["path"] for f in report_b["files"]) == ["b.py", "notes.txt"]
    notes_a = next(f for f in report_a["files"] if f["path"] == "notes.txt")
    assert "-x\n+y\n" in notes_a["diff"]  # what A wrote, not B's later z

    refused = undo(repo, env_a, report_a["session_id"])
    assert refused.returncode == 1
    assert "notes.txt changed after the session's last change to it" in refused.stderr
    assert read(repo / "b.py") == "b = 2\n" and read(repo / "made.txt") == "made\n"

    undone_b = undo(repo, env_b, report_b["session_id"])
    assert undone_b.returncode == 0, undone_b.stderr
    assert read(repo / "b.py") == "b = 1\n" and read(repo / "notes.txt") == "y\n"
    assert read(repo / "made.txt") == "made\n"  # A's, not B's

    undone_a = undo(repo, env_a, report_a["session_id"])
    assert undone_a.returncode == 0, undone_a.stderr
    assert sorted(undone_a.stdout.splitlines()) == ["removed made.txt", "restored notes.txt"]
    assert read(repo / "notes.txt") == "x\n" and not (repo / "made.txt").exists()
    assert read(repo / "b.py") == "b = 1\n"
