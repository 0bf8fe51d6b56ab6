"""``cadenza run --output json`` never prints or records an API key, end to end.

Through the real CLI process, its ``cadenza serve`` and a scripted model server on loopback:

- an allowed command writes the key into a file: the file keeps it (it is the person's), but
  stdout (``files[].diff``, the summary), stderr, the ``--events`` log and the session's
  transcript do not;
- the model server refuses the key and echoes it across the 300th character of its error
  message (where the message used to be cut before it was redacted): no piece of the key is
  in the run's error, on either stream, or in the transcript.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, Reply, call, text

RUN_TIMEOUT_S = 120


def fresh_key() -> str:
    return "sk-proj-" + os.urandom(32).hex()


def pieces(key: str, size: int = 8) -> list[str]:
    """Every run of ``size`` characters of the key's random part."""
    secret = key[len("sk-proj-") :]
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def leaked(key: str, text: str) -> list[str]:
    return [piece for piece in pieces(key) if piece in text]


@pytest.fixture
def fake() -> FakeOpenAI:
    with FakeOpenAI() as server:
        yield server  # type: ignore[misc]


def environment(tmp_path: Path, fake: FakeOpenAI, key: str) -> dict[str, str]:
    values = {
        k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "XDG_", "OPENAI_"))
    }
    values.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=key, NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        values[name] = str(folder)
    return values


def run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "cadenza", "run", "--workspace", str(project)]
    return subprocess.run(
        [*argv, "--model", "openai/test", *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def recorded(state: Path) -> str:
    """Everything Cadenza wrote under its state folder (transcripts, checkpoints' manifests)."""
    texts = []
    for path in sorted(state.rglob("*")):
        if path.is_file() and path.suffix in (".jsonl", ".json", ".log"):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(texts)


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
def test_a_key_a_command_wrote_is_in_the_file_only(
    tmp_path: Path, fake: FakeOpenAI, git: bool
) -> None:
    key = fresh_key()
    env = environment(tmp_path, fake, key)
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("print('hi')\n")
    if git:
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True
            )
    command = 'printf "OPENAI_API_KEY=%s\\n" "$OPENAI_API_KEY" > .env.local && cat .env.local'
    fake.script(
        call("run_command", {"command": command}, "c1"),
        call("read_file", {"path": ".env.local"}, "c2"),
        text("Wrote the environment file."),
    )
    events = tmp_path / "events.jsonl"
    args = ("--allow", "run_command", "--events", str(events), "--output", "json")
    done = run(project, env, *args, "write the env file")
    assert done.returncode == 0, leaked(key, done.stderr) or done.stderr[-2000:]
    assert (project / ".env.local").read_text() == f"OPENAI_API_KEY={key}\n"  # the person's
    report = json.loads(done.stdout)
    files = {f["path"]: f for f in report["files"]}
    assert files[".env.local"]["kind"] == "created"
    assert "+OPENAI_API_KEY=[redacted]" in files[".env.local"]["diff"]
    assert not leaked(key, done.stdout)
    assert not leaked(key, done.stderr)  # the live display and the printed summary
    logged = events.read_text(encoding="utf-8")
    assert "c1" in logged and not leaked(key, logged)  # --events: every server message
    state = recorded(tmp_path / "xdg_state_home")
    assert "c1" in state and "[redacted]" in state  # the transcript is there, and redacted
    assert not leaked(key, state)
    # What the model was sent: the command's output and the read, both redacted.
    sent = json.dumps(fake.requests)
    assert "[redacted]" in sent and not leaked(key, sent)


def test_a_server_error_echoing_the_key_across_its_300th_character(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    key = fresh_key()
    env = environment(tmp_path, fake, key)
    project = tmp_path / "project"
    project.mkdir()
    echo = "The request was refused. " + "x" * 203 + f" Authorization: Bearer {key} ."
    assert echo.index(key) < 300 < echo.index(key) + len(key)  # across the old cut
    fake.script(Reply(status=401, error_message=echo))
    done = run(project, env, "--output", "json", "anything")
    report = json.loads(done.stdout)
    assert report["stop_reason"] == "error", report
    assert "refused the API key" in report["error"]
    assert not leaked(key, done.stdout)
    assert not leaked(key, done.stderr)
    assert not leaked(key, recorded(tmp_path / "xdg_state_home"))
