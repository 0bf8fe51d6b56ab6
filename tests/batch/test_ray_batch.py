"""``cadenza batch`` end to end on a local Ray cluster against a scripted model server process.

Each test starts ``cadenza batch`` as a subprocess (it starts its own local Ray cluster, which
takes several seconds), with sessions on the ``openai`` provider pointed at
tests/batch/model_server.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.batch.conftest import ModelServer, cadenza_batch, make_repo

pytest.importorskip("ray", reason="the batch extra is not installed: pip install -e '.[batch]'")
pytestmark = pytest.mark.batch

BATCH_TIMEOUT_S = 300


def write_tasks(path: Path, lines: list[dict[str, Any] | str]) -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def run_batch(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cadenza_batch(*args),
        env=env,
        capture_output=True,
        text=True,
        timeout=BATCH_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def servers_of(model: ModelServer) -> list[int]:
    """Pids of ``cadenza serve`` processes talking to this test's model server."""
    marker = f"OPENAI_BASE_URL={model.base_url}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            if b"cadenza\0serve" not in cmdline:
                continue
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def scratch_folders() -> set[str]:
    """The workers' scratch folders in the temporary folder."""
    return {p.name for p in Path(tempfile.gettempdir()).glob("cadenza-batch-slow-*")}


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def hidden(out: Path) -> list[str]:
    return [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_three_repos_two_tasks_then_resume(
    tmp_path: Path, batch_env: dict[str, str], model: ModelServer
) -> None:
    repos = [make_repo(tmp_path / "repos", name) for name in ("red", "green", "blue")]
    lines: list[dict[str, Any] | str] = []
    for repo in repos:
        for n in (1, 2):
            lines.append(
                {
                    "id": f"{repo.name}-{n}",
                    "repo": str(repo),
                    "task": f"batch-write: {repo.name}{n}.txt token-{repo.name}-{n}",
                }
            )
    lines.insert(3, '{"repo": "broken"')
    tasks = write_tasks(tmp_path / "tasks.jsonl", lines)
    out = tmp_path / "out"

    done = run_batch(batch_env, str(tasks), "--out", str(out), "--max-concurrency", "3")
    assert done.returncode == 1, done.stderr  # a line was skipped
    assert f"{tasks}:4: skipped: not JSON" in done.stderr
    for repo in repos:
        for n in (1, 2):
            folder = out / f"{repo.name}-{n}"
            result = json.loads((folder / "result.json").read_text())
            assert (result["status"], result["stop_reason"], result["attempts"]) == (
                "done",
                "end_turn",
                1,
            )
            assert result["base_commit"] and result["worker"]["node_id"]
            diff = (folder / "patch.diff").read_text()
            assert f"+++ b/{repo.name}{n}.txt" in diff
            assert f"+token-{repo.name}-{n}" in diff
            assert (folder / "transcript.jsonl").read_text().strip()
            assert (folder / "events.jsonl").read_text().strip()
            # The patch applies to the repository at its base commit.
            check = subprocess.run(
                ["git", "apply", "--check", str(folder / "patch.diff")], cwd=repo
            )
            assert check.returncode == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["done"] == 6
    assert summary["skipped_lines"][0]["line"] == 4
    assert hidden(out) == []

    kept = (out / "red-1" / "result.json").stat().st_mtime_ns
    subprocess.run(["rm", "-r", str(out / "blue-2")], check=True)
    again = run_batch(batch_env, str(tasks), "--out", str(out), "--resume")
    assert "5 task(s) already done" in again.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert [t["id"] for t in summary["tasks"]] == ["blue-2"]
    assert (out / "red-1" / "result.json").stat().st_mtime_ns == kept
    assert json.loads((out / "blue-2" / "result.json").read_text())["status"] == "done"


@pytest.mark.usefixtures("ctrl_c_reaches_children")
def test_sigint_cancels_running_sessions_and_writes_nothing_half(
    tmp_path: Path, batch_env: dict[str, str], model: ModelServer
) -> None:
    repo = make_repo(tmp_path / "repos", "slow")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {
                "id": f"slow-{n}",
                "repo": str(repo),
                "task": f"batch-hold: k{n} 120 batch-write: s{n}.txt x",
            }
            for n in (1, 2)
        ],
    )
    out = tmp_path / "out"
    scratch_before = scratch_folders()
    driver = subprocess.Popen(
        cadenza_batch(str(tasks), "--out", str(out)),
        env=batch_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: len(model.stats()["held"]) == 2, 120, "both sessions to be running")
        assert len(servers_of(model)) == 2
        driver.send_signal(signal.SIGINT)
        _, stderr = driver.communicate(timeout=300)  # bounds a hang; generous under load
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 130, stderr
    assert "interrupted" in stderr
    assert sorted(p.name for p in out.iterdir()) == ["batch.json", "summary.json"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["counts"]["cancelled"] == 2
    wait_for(lambda: servers_of(model) == [], 120, "the sessions' servers to exit")
    # The workers were interrupted, not killed: they removed their scratch folders.
    assert scratch_folders() - scratch_before == set()


def test_a_worker_killed_mid_task_is_retried_once(
    tmp_path: Path, batch_env: dict[str, str], model: ModelServer
) -> None:
    repo = make_repo(tmp_path / "repos", "fragile")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": "fragile", "repo": str(repo), "task": "batch-hold: kill 120 batch-write: f.txt y"}],
    )
    out = tmp_path / "out"
    driver = subprocess.Popen(
        cadenza_batch(str(tasks), "--out", str(out)),
        env=batch_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: model.stats()["held"].get("kill") == 1, 120, "the session to run")
        [server] = servers_of(model)
        worker = int(Path(f"/proc/{server}/stat").read_text().rsplit(")", 1)[1].split()[1])
        os.kill(worker, signal.SIGKILL)
        stdout, stderr = driver.communicate(timeout=300)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, stdout + stderr
    assert "worker died" in stdout
    result = json.loads((out / "fragile" / "result.json").read_text())
    assert (result["status"], result["attempts"]) == ("done", 2)
    assert "+++ b/f.txt" in (out / "fragile" / "patch.diff").read_text()
    wait_for(lambda: servers_of(model) == [], 120, "the killed worker's server to exit")
