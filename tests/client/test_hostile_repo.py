"""``cadenza run`` on a repository whose ``.git/config`` runs programs: none of them runs.

A real ``cadenza run`` (which notes the workspace with ``git status`` at the start and end of
the run) on the hostile repository of tests/support/hostile_git.py, with a scripted model over
loopback that only answers in text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, call, text
from tests.support.hostile_git import hostile_repo, written


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def test_a_text_answer_runs_nothing_of_the_repository(tmp_path: Path, fake: FakeOpenAI) -> None:
    marks = tmp_path / "marks"
    repo = hostile_repo(tmp_path, marks)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "GIT_"))}
    env.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        (tmp_path / name.lower()).mkdir()
        env[name] = str(tmp_path / name.lower())
    fake.script(text("The project prints a line."))
    run = ("run", "--workspace", str(repo), "--output", "json", "--model", "openai/test")
    done = subprocess.run(
        [sys.executable, "-m", "cadenza", *run, "What does this project do?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["stop_reason"], report["files"]) == ("end_turn", [])
    assert written(marks) == []
    # The same repository, asked by plain git, runs them: the guard made the difference.
    subprocess.run(["git", "status"], cwd=repo, env=env, capture_output=True, check=False)
    assert "fsmonitor" in written(marks)


def run_env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "GIT_"))}
    env.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        (tmp_path / name.lower()).mkdir(exist_ok=True)
        env[name] = str(tmp_path / name.lower())
    return env


def run_git_status(repo: Path, env: dict[str, str], *extra: str) -> dict[str, object]:
    """``cadenza run`` whose model runs ``git status`` (allowed by ``--allow``)."""
    run = ("run", "--workspace", str(repo), "--output", "json", "--model", "openai/test")
    done = subprocess.run(
        [sys.executable, "-m", "cadenza", *run, "--allow", "run_command", *extra, "status?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_a_git_command_the_model_runs_runs_nothing_of_the_repository(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    marks = tmp_path / "marks"
    repo = hostile_repo(tmp_path, marks)
    env = run_env(tmp_path, fake)
    fake.script(call("run_command", {"command": "git status; git diff"}, "c1"), text("clean"))
    report = run_git_status(repo, env)
    assert report["stop_reason"] == "end_turn"
    [_, second] = fake.requests
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["content"].startswith("exit code 0"), result["content"]
    assert written(marks) == []

    # A folder the person trusts: its git configuration is theirs to run.
    subprocess.run(
        [sys.executable, "-m", "cadenza", "trust", str(repo)], env=env, check=True, timeout=60
    )
    fake.script(call("run_command", {"command": "git status"}, "c1"), text("clean"))
    run_git_status(repo, env)
    assert "fsmonitor" in written(marks)


def test_a_repository_named_like_cadenza_is_never_imported(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """``cadenza run`` started inside the repository: its ``cadenza/`` does not replace ours.

    The server is ``python -m cadenza``; without ``-P`` Python puts the working folder first on
    ``sys.path``, and a repository's ``cadenza/__main__.py`` (or a module named like one of our
    dependencies) ran before a single model request.
    """
    repo = tmp_path / "repo"
    marker = tmp_path / "imported"
    for name in ("cadenza", "pygls"):
        (repo / name).mkdir(parents=True)
        plant = f"import pathlib; pathlib.Path({str(marker)!r}).write_text({name!r})\n"
        for module in ("__init__.py", "__main__.py"):
            (repo / name / module).write_text(plant)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "PYTHON"))}
    env.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        (tmp_path / name.lower()).mkdir()
        env[name] = str(tmp_path / name.lower())
    fake.script(text("A folder."))
    cadenza = Path(sys.executable).parent / "cadenza"
    done = subprocess.run(
        [str(cadenza), "run", "--output", "json", "--model", "openai/test", "What is here?"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stop_reason"] == "end_turn"


def test_a_fifo_in_a_folder_without_git_does_not_stop_the_run(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """The run notes the workspace's files at its start and end: a FIFO is noted, never read."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("a\n")
    os.mkfifo(repo / "pipe")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "GIT_"))}
    env.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        (tmp_path / name.lower()).mkdir()
        env[name] = str(tmp_path / name.lower())
    fake.script(text("Two files."))
    run = ("run", "--workspace", str(repo), "--output", "json", "--model", "openai/test")
    done = subprocess.run(
        [sys.executable, "-m", "cadenza", *run, "What is here?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["stop_reason"], report["files"]) == ("end_turn", [])
