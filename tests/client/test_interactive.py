"""``cadenza run --interactive`` end to end: the real CLI and server, a scripted fake model.

The person's messages come on the CLI's standard input (a pipe): each one after a turn that
ended well goes to the same session (``cadenza.promptSession``); an empty line or EOF ends it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, call, is_workspace, text

RUN_TIMEOUT_S = 90


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def total(items):\n    return sum(items)\n", encoding="utf-8")
    return root


@pytest.fixture
def env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    values = dict(os.environ)
    values.update(
        OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", PYTHONIOENCODING="utf-8", NO_COLOR="1"
    )
    values.pop("CADENZA_MODEL", None)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        values[name] = str(folder)
    return values


def run(ws: Path, env: dict[str, str], stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cadenza", "run", "--workspace", str(ws), *args]
    return subprocess.run(
        command,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
    )


def users(request: dict[str, object]) -> list[object]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [m["content"] for m in messages if m["role"] == "user" and not is_workspace(m)]


def test_two_turns_over_stdin_then_eof(ws: Path, env: dict[str, str], fake: FakeOpenAI) -> None:
    fake.script(text("It sums the items."), text("Call it sum_of."))
    done = run(ws, env, "a better name?\n", "-i", "--model", "openai/test", "what does total do?")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(fake.requests) == 2
    first, second = fake.requests
    assert users(first) == ["what does total do?"]
    # The second request holds the first turn: its prompt, the model's answer, then the follow-up.
    assert users(second)[0] == "what does total do?"
    assert users(second)[-1] == "a better name?"
    assert any(m.get("content") == "It sums the items." for m in second["messages"])
    assert "It sums the items." in done.stdout and "Call it sum_of." in done.stdout
    assert done.stdout.count("an empty line or Ctrl-D ends the run") == 2  # asked after each turn
    assert "cadenza run --continue" not in done.stdout  # the prompt replaces the hint
    assert "Traceback" not in done.stderr, done.stderr


def test_an_empty_line_ends_the_run_and_nothing_after_it_is_sent(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(text("It sums the items."), text("never asked"))
    done = run(ws, env, "\nnot sent\n", "--interactive", "--model", "openai/test", "what?")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(fake.requests) == 1


def test_a_turn_that_fails_ends_the_run_with_its_status(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    failed = call("complete", {"status": "failed", "summary": "no such function"}, "c1")
    fake.script(text("It sums the items."), failed, text("never asked"))
    done = run(ws, env, "rename foo\nnot sent\n", "-i", "--model", "openai/test", "what?")
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(fake.requests) == 2  # no prompt after a turn that did not end well
    assert "message: no such function" in done.stdout.splitlines()


def test_interactive_with_json_output_is_a_usage_error(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    done = run(ws, env, "", "-i", "--output", "json", "--model", "openai/test", "what?")
    assert done.returncode == 2
    assert "--interactive cannot be used with --output json" in done.stderr
    assert done.stdout == ""
    assert fake.requests == []


def test_help_documents_interactive(env: dict[str, str]) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "cadenza", "run", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert shown.returncode == 0
    assert "-i, --interactive" in shown.stdout
    assert "Ctrl-D" in " ".join(shown.stdout.split())


def test_ctrl_c_at_the_prompt_ends_the_run_with_130(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(text("It sums the items."))
    command = [sys.executable, "-m", "cadenza", "run", "-i", "--workspace", str(ws)]
    process = subprocess.Popen(
        [*command, "--model", "openai/test", "what?"],
        env=env,
        stdin=subprocess.PIPE,  # kept open: the prompt waits for a line that never comes
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "ends the run" in line:
                break
        process.send_signal(signal.SIGINT)
        # wait(), not communicate(): closing stdin would be an EOF racing the signal.
        process.wait(timeout=RUN_TIMEOUT_S)
        assert process.stderr is not None
        err = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert len(fake.requests) == 1
