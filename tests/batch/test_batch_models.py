"""The local model in a batch: one shared ``llama-server`` per node, on a local Ray cluster.

With the small real model (smollm2-135m, pulled beforehand: ``cadenza models pull
smollm2-135m``), a batch of three tasks runs on one llama-server started by the node's actor
(the driver's sessions point at it), and no llama-server is left once the batch has ended or
was stopped with Ctrl-C. The model's work is bounded by steps and tokens; what it writes does
not matter. The slot table that limits a node's sessions is tested alone below.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cadenza.batch.model_servers import ServedModel, SlotTable
from cadenza.providers.models import model_path
from tests.batch.conftest import make_repo

MODEL = "local/smollm2-135m"
BATCH_TIMEOUT_S = 2400
"""Generous: on a loaded 2-core machine the tiny model evaluates ~15 prompt tokens/s."""


def served(node: str, slots: int) -> ServedModel:
    return ServedModel(model=MODEL, node_id=node, url=f"http://{node}", pid=1, slots=slots)


def test_the_slot_table_gives_each_node_at_most_its_slots() -> None:
    table = SlotTable(served={MODEL: {"a": served("a", 2), "b": served("b", 1)}})
    assert table.serves(MODEL) and not table.serves("openai/x") and not table.serves(None)
    taken = [table.take(MODEL) for _ in range(4)]
    assert sorted(t for t in taken if t) == ["a", "a", "b"]
    assert taken[3] is None  # every slot busy: the task waits
    table.release(MODEL, "b")
    assert table.take(MODEL) == "b"
    assert table.capacity() == 3
    assert table.urls() == {MODEL: {"a": "http://a", "b": "http://b"}}


@pytest.fixture
def pulled() -> None:
    if model_path(MODEL.removeprefix("local/")) is None:
        pytest.skip("smollm2-135m is not pulled (cadenza models pull smollm2-135m)")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "RAY_"))}
    config = tmp_path / "config"
    (config / "cadenza").mkdir(parents=True)
    # Bounded work: short replies, a small context per slot.
    (config / "cadenza" / "cadenza.toml").write_text(
        "maxTokens = 16\ncontextSize = 2048\n", encoding="utf-8"
    )
    values.update(XDG_CONFIG_HOME=str(config), NO_COLOR="1")
    return values


def llama_servers(env: dict[str, str]) -> set[int]:
    """Pids of llama-server processes started under this test's environment."""
    marker = f"XDG_CONFIG_HOME={env['XDG_CONFIG_HOME']}".encode()
    pids = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"llama-server" not in (proc / "cmdline").read_bytes().split(b"\0")[0]:
                continue
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                pids.add(int(proc.name))
        except OSError:
            continue
    return pids


class Watcher:
    """Samples the test's llama-server processes until stopped."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.seen |= llama_servers(self.env)
            self._stop.wait(0.2)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def tasks_file(tmp_path: Path, count: int) -> Path:
    repo = make_repo(tmp_path / "repos", "tiny")
    lines = [
        json.dumps(
            {"id": f"t{n}", "repo": str(repo), "task": f"Write hello{n}.txt", "max_steps": 1}
        )
        for n in range(count)
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def batch(tasks: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "cadenza", "batch", str(tasks), "--out", str(out),
        "--model", MODEL, "--model-slots", "3", *extra,
    ]  # fmt: skip


def gone(pids: set[int], timeout: float = 120.0) -> bool:
    # Generous: a bound on a hang, not on speed (a loaded machine stops processes slowly).
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() for pid in pids):
            return True
        time.sleep(0.2)
    return False


@pytest.fixture
def ray_installed() -> Iterator[None]:
    pytest.importorskip("ray", reason="the batch extra is not installed")
    yield


@pytest.mark.batch
@pytest.mark.e2e
@pytest.mark.usefixtures("ray_installed", "pulled")
def test_one_shared_llama_server_serves_the_whole_batch(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    with Watcher(env) as watcher:
        done = subprocess.run(
            batch(tasks_file(tmp_path, 3), out),
            env=env,
            capture_output=True,
            text=True,
            timeout=BATCH_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode in (0, 1), done.stderr  # the model's quality does not matter
    assert "model servers ready" in done.stdout, done.stdout
    assert "up to 3 at once" in done.stdout  # the node's slots bound its sessions
    results = [json.loads((out / f"t{n}" / "result.json").read_text()) for n in range(3)]
    urls = {r["model_server"] for r in results}
    assert len(urls) == 1 and None not in urls, results
    for result in results:
        assert result["status"] in ("done", "incomplete", "failed"), result
        assert result["usage"] and result["usage"]["requests"] >= 1, result  # it asked the model
    assert len(watcher.seen) == 1, watcher.seen  # one llama-server for the three sessions
    assert gone(watcher.seen), "the llama-server outlived the batch"
    assert llama_servers(env) == set()


@pytest.mark.batch
@pytest.mark.e2e
@pytest.mark.usefixtures("ray_installed", "pulled", "ctrl_c_reaches_children")
def test_ctrl_c_stops_the_shared_llama_server(tmp_path: Path, env: dict[str, str]) -> None:
    out = tmp_path / "out"
    with Watcher(env) as watcher:
        process = subprocess.Popen(
            batch(tasks_file(tmp_path, 4), out),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            deadline = time.monotonic() + BATCH_TIMEOUT_S
            while not watcher.seen:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "no llama-server started"
                time.sleep(0.2)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=BATCH_TIMEOUT_S)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130, err
    assert len(watcher.seen) == 1
    assert gone(watcher.seen), "the llama-server outlived the interrupted batch"
