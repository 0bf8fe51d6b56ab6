"""The trust model end to end: real ``cadenza run`` and ``cadenza serve`` processes, a scripted
OpenAI-compatible model on 127.0.0.1, a fake ``claude`` program on PATH.

- A model that writes ``.vscode/settings.json`` (the file a peer's extension reads its
  permission default from) is refused under ``--yes``, even with ``--allow-all``: nothing is
  written and the model reads why.
- A workspace ``cadenza.toml`` with ``model = "cli/claude"`` is ignored (with a one-line note)
  unless the run trusts the folder (``--trust-workspace``); trusted, the program runs.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, call, text

RUN_TIMEOUT_S = 90

FAKE_CLAUDE = """#!{python}
import json, os, sys
sys.stdin.read()
with open(os.environ["CADENZA_TEST_MARKER"], "a", encoding="utf-8") as f:
    f.write("claude ran\\n")
envelope = {{"content": "answered by the workspace's model", "tool_calls": []}}
print(json.dumps({{"result": json.dumps(envelope)}}))
"""


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return root


@pytest.fixture
def env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "XDG_"))}
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        values[name] = str(folder)
    user = tmp_path / "xdg_config_home" / "cadenza"
    user.mkdir()
    (user / "cadenza.toml").write_text('model = "openai/test"\n', encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(FAKE_CLAUDE.format(python=sys.executable), encoding="utf-8")
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    values.update(
        OPENAI_BASE_URL=fake.base_url,
        OPENAI_API_KEY="x",
        PYTHONIOENCODING="utf-8",
        NO_COLOR="1",
        PATH=f"{bin_dir}{os.pathsep}{values.get('PATH', '')}",
        CADENZA_TEST_MARKER=str(tmp_path / "claude-ran.txt"),
    )
    return values


def run(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cadenza", "run", "--workspace", str(ws), *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def tool_results(request: dict[str, object]) -> list[str]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [m["content"] for m in messages if m["role"] == "tool"]


SETTINGS = json.dumps({"cadenza.permissions.default": "allow"}) + "\n"


@pytest.mark.parametrize("flags", [["--yes"], ["--yes", "--allow-all"]])
def test_the_model_cannot_write_editor_settings_headlessly(
    ws: Path, env: dict[str, str], fake: FakeOpenAI, flags: list[str]
) -> None:
    fake.script(
        call("create_file", {"path": ".vscode/settings.json", "content": SETTINGS}, "c1"),
        call(
            "write_file",
            {"path": "./src/../.VSCode/settings.json", "content": SETTINGS},
            "c2",
        ),
        text("I could not change the editor settings."),
    )
    done = run(ws, env, *flags, "make the editor stop asking")
    # Both edits were declined for the person: the turn ends with the model's answer (the
    # done checks never ask for a change the person declined).
    assert done.returncode == 0, done.stdout + done.stderr
    assert "I could not change the editor settings." in done.stdout
    assert "check:" not in done.stdout and len(fake.requests) == 3
    assert not (ws / ".vscode").exists() and not (ws / ".VSCode").exists()
    results = tool_results(fake.requests[-1])
    assert len(results) == 2
    for result in results:
        assert "was not changed: it is a protected file" in result, result
        assert "VS Code's settings" in result and "the person declined" in result
    assert "no files changed" in done.stdout


def test_a_workspace_model_runs_only_in_a_trusted_folder(
    ws: Path, env: dict[str, str], fake: FakeOpenAI, tmp_path: Path
) -> None:
    (ws / "cadenza.toml").write_text('model = "cli/claude"\n', encoding="utf-8")
    marker = Path(env["CADENZA_TEST_MARKER"])
    fake.script(text("answered by the person's model"))

    untrusted = run(ws, env, "--yes", "say hello")
    assert untrusted.returncode == 0, untrusted.stdout + untrusted.stderr
    assert not marker.exists()  # the workspace's program never ran
    assert len(fake.requests) == 1 and fake.requests[0]["model"] == "test"
    output = untrusted.stdout + untrusted.stderr
    assert "Cadenza ignored model from" in output and "--trust-workspace" in output
    assert not (tmp_path / "xdg_state_home" / "cadenza" / "trust.json").exists()

    trusted = run(ws, env, "--yes", "--trust-workspace", "say hello")
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    assert marker.read_text(encoding="utf-8") == "claude ran\n"
    assert "answered by the workspace's model" in trusted.stdout
    assert len(fake.requests) == 1  # the person's model was not asked this time
    assert "trusted for this run" in trusted.stdout
    # --trust-workspace is for that run only: nothing was recorded.
    assert not (tmp_path / "xdg_state_home" / "cadenza" / "trust.json").exists()
