"""Fixtures of the batch tests: a scripted model server process, small git repositories."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

MODEL_SERVER = Path(__file__).with_name("model_server.py")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "batch: cadenza batch on a local Ray cluster (needs the batch extra)"
    )


@dataclass(frozen=True)
class ModelServer:
    """The scripted model server process (tests/batch/model_server.py)."""

    process: subprocess.Popen[str]
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=5) as r:
            data: dict[str, Any] = json.loads(r.read())
        return data


@pytest.fixture
def model() -> Iterator[ModelServer]:
    process = subprocess.Popen(
        [sys.executable, str(MODEL_SERVER)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("PORT "), line
    try:
        yield ModelServer(process=process, port=int(line.split()[1]))
    finally:
        process.kill()
        process.wait(10)


def make_repo(root: Path, name: str) -> Path:
    repo = root / name
    repo.mkdir(parents=True)
    (repo / "README.md").write_text(f"the {name} repository\n", encoding="utf-8")
    for args in (
        ["init", "--quiet"],
        ["add", "--all"],
        ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "--quiet", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


@pytest.fixture
def batch_env(tmp_path: Path, model: ModelServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "RAY_"))}
    env.update(
        OPENAI_BASE_URL=model.base_url,
        OPENAI_API_KEY="x",
        NO_COLOR="1",
    )
    return env


def cadenza_batch(*args: str) -> list[str]:
    return [sys.executable, "-m", "cadenza", "batch", *args, "--model", "openai/test"]


@pytest.fixture
def ctrl_c_reaches_children() -> Iterator[None]:
    """Children start with SIGINT at its default, as a command run in a terminal does.

    A shell without job control starts a background job (``.ci/run &``) with SIGINT ignored,
    every descendant inherits that, and Python then installs no ``KeyboardInterrupt`` handler:
    the batch never saw the test's Ctrl-C. A handled signal is reset to its default across
    ``exec``, so handling it here for the test's duration gives the child the default.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
