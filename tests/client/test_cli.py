"""``cadenza run`` end to end: the real CLI and server as subprocesses, a scripted fake model.

The fake model is an OpenAI-compatible HTTP server on 127.0.0.1 in this process
(:mod:`tests.support.fake_openai`); ``cadenza run`` spawns ``cadenza serve``, which calls it
through the ``openai`` provider (``OPENAI_BASE_URL``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, Reply, assert_tool_calls_answered, call, text

RUN_TIMEOUT_S = 60
APP = b"def total(items):\r\n    return sum(items)\r\n\r\nprint(total([1, 2]))\r\n"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_bytes(APP)
    (root / "README.txt").write_text("A tiny workspace.\n", encoding="utf-8")
    return root


@pytest.fixture
def env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    values = dict(os.environ)
    values.update(
        OPENAI_BASE_URL=fake.base_url,
        OPENAI_API_KEY="x",
        PYTHONIOENCODING="utf-8",
        NO_COLOR="1",
    )
    values.pop("CADENZA_MODEL", None)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        values[name] = str(folder)
    return values


def cadenza_run(ws: Path, env: dict[str, str], *args: str) -> list[str]:
    return [sys.executable, "-m", "cadenza", "run", "--workspace", str(ws), *args]


def run(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cadenza_run(ws, env, *args),
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def test_run_edits_the_file_and_prints_a_summary(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(
        call("read_file", {"path": "app.py"}, "call-1"),
        call(
            "edit_file",
            {"path": "app.py", "old_string": "def total(", "new_string": "def grand_total("},
            "call-2",
        ),
        call(
            "edit_file",
            {"path": "app.py", "old_string": "print(total(", "new_string": "print(grand_total("},
            "call-3",
        ),
        text("Renamed total to grand_total in app.py."),
    )
    done = run(ws, env, "--model", "openai/test", "rename total to grand_total")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ws / "app.py").read_bytes() == APP.replace(b"total(", b"grand_total(")
    assert not [p for p in ws.iterdir() if p.name.endswith(".cadenza-tmp")]
    lines = done.stdout.splitlines()
    assert sum(line.startswith("✓ ") for line in lines) == 3, done.stdout
    assert "Renamed total to grand_total in app.py." in lines
    assert any(line.startswith("session end_turn · steps 4 · wall time ") for line in lines)
    assert "files changed (1):" in lines
    assert "  M app.py  +2 -2" in lines
    assert "-def total(items):" in lines and "+def grand_total(items):" in lines
    assert len(fake.requests) == 4
    assert_tool_calls_answered(fake.requests[-1])


def test_provider_error_exits_non_zero_with_the_message(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(*[Reply(status=500)] * 10)
    done = run(ws, env, "--model", "openai/test", "do something")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error: " in done.stdout and "HTTP 500" in done.stdout
    assert any(line.startswith("session error · ") for line in done.stdout.splitlines())
    assert "no files changed" in done.stdout
    assert (ws / "app.py").read_bytes() == APP


def test_unknown_provider_is_a_clear_error(ws: Path, env: dict[str, str]) -> None:
    done = run(ws, env, "--model", "nosuch/model", "do something")
    assert done.returncode == 1
    assert done.stderr.startswith("error: the server refused the session")
    assert "unknown provider 'nosuch'" in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_workspace_is_a_clear_error(tmp_path: Path, env: dict[str, str]) -> None:
    done = run(tmp_path / "nope", env, "--model", "openai/test", "x")
    assert done.returncode == 1
    assert "is not a folder" in done.stderr


def test_step_bound_exits_3(ws: Path, env: dict[str, str], fake: FakeOpenAI) -> None:
    fake.script(*[call("read_file", {"path": "app.py"}, f"c{i}") for i in range(5)])
    done = run(ws, env, "--model", "openai/test", "--max-steps", "2", "loop")
    assert done.returncode == 3, done.stdout + done.stderr
    assert any(line.startswith("session max_steps · steps 2") for line in done.stdout.splitlines())


def test_questions_declined_with_yes(ws: Path, env: dict[str, str], fake: FakeOpenAI) -> None:
    fake.script(
        call("ask_user", {"question": "Which name should I use?"}, "c1"),
        text("I kept the old name."),
    )
    done = run(ws, env, "--model", "openai/test", "--yes", "rename something")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "? Which name should I use? → declined (--yes)" in done.stdout.splitlines()
    tool_results = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert any("declined" in str(content) for content in tool_results)


def test_ctrl_c_cancels_the_session_and_exits_130(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(Reply(content="too late", delay_s=30))
    started = time.monotonic()
    process = subprocess.Popen(
        cadenza_run(ws, env, "--model", "openai/test", "wait for me"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )
    try:
        assert process.stdout is not None
        seen: list[str] = []
        for line in process.stdout:
            seen.append(line)
            if line.startswith("· step 1/"):
                break
        while not fake.requests and time.monotonic() - started < RUN_TIMEOUT_S:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
    output = "".join(seen) + out
    assert process.returncode == 130, output + err
    assert "interrupted: cancelling the session" in output
    assert any(line.startswith("session cancelled") for line in output.splitlines()), output
    assert time.monotonic() - started < 25
    assert (ws / "app.py").read_bytes() == APP
