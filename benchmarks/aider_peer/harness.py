"""aider beside Cadenza: its own venv, its settings for a local llama-server, one driven run.

aider (``aider-chat`` 0.86.2) pins its many dependencies, so it never shares the project's
venv: ``install`` makes its own (``python -m benchmarks.humaneval.aider_run --install``). It talks
to the run's llama-server as an OpenAI-compatible endpoint (``openai/MODEL``, a dummy key), in
its whole-file edit format, without a repository map or lint; a model settings file gives the
temperature (0, as Cadenza's local provider) and the reply bound (Cadenza's local default), a
metadata file the context size, so aider looks nothing up on the network. Its home folder is
private to the task, which keeps aider's caches and analytics settings out of the person's.
Each benchmark decides the rest (aider's test runs, git, the message, tries) and ``drive``
runs ``driver.py`` with aider's Python on it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AIDER_VERSION = "0.86.2"
DEFAULT_VENV = ROOT / ".aider-venv"
DRIVER = Path(__file__).resolve().parent / "driver.py"


def aider_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def install(venv: Path) -> Path:
    """Create ``venv`` and install aider into it (skipped when that version is there)."""
    python = aider_python(venv)
    if not python.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if installed_version(venv) != AIDER_VERSION:
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"aider-chat=={AIDER_VERSION}"],
            check=True,
        )
    return python


def installed_version(venv: Path) -> str | None:
    """aider's version in ``venv`` (None: not installed)."""
    python = aider_python(venv)
    if not python.is_file():
        return None
    done = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('aider-chat'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


@dataclass(frozen=True)
class AiderSetup:
    """What every aider run of a harness run shares."""

    venv: Path
    base_url: str
    """The llama-server's ``http://127.0.0.1:PORT``."""
    model: str
    """The model's name as aider sees it (``openai/NAME``)."""
    settings: Path
    metadata: Path


def write_settings(
    folder: Path, *, model_name: str, ctx_size: int, max_tokens: int
) -> tuple[Path, Path]:
    """aider's model settings (YAML; JSON is YAML) and model metadata files in ``folder``."""
    name = f"openai/{model_name}"
    settings = folder / "aider.model.settings.yml"
    settings.write_text(
        json.dumps(
            [
                {
                    "name": name,
                    "edit_format": "whole",
                    "use_repo_map": False,
                    "use_temperature": True,
                    "streaming": True,
                    "extra_params": {"max_tokens": max_tokens},
                }
            ],
            indent=2,
        ),
        encoding="utf-8",
    )
    metadata = folder / "aider.model.metadata.json"
    metadata.write_text(
        json.dumps(
            {
                name: {
                    "max_tokens": max_tokens,
                    "max_input_tokens": ctx_size,
                    "max_output_tokens": max_tokens,
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "litellm_provider": "openai",
                    "mode": "chat",
                }
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    return settings, metadata


def make_setup(
    venv: Path, *, base_url: str, model_name: str, folder: Path, ctx_size: int, max_tokens: int
) -> AiderSetup:
    """The settings files written in ``folder`` and the setup that names them."""
    settings, metadata = write_settings(
        folder, model_name=model_name, ctx_size=ctx_size, max_tokens=max_tokens
    )
    return AiderSetup(venv, base_url, f"openai/{model_name}", settings, metadata)


def aider_args(
    setup: AiderSetup,
    logs: Path,
    timeout: float,
    *,
    test_cmd: str | None = None,
    git: bool = False,
) -> list[str]:
    """aider's command-line flags for one task (history files in ``logs``).

    ``test_cmd``: aider runs it after each edit (``--auto-test``) and, when it fails, gives the
    model its output to fix (aider's reflections, at most 3); None: aider runs no tests.
    ``git``: the workspace is a git repository aider works in, without committing its edits
    (a commit message is one more model request per edit that no task asks for).
    """
    tests = ["--test-cmd", test_cmd, "--auto-test"] if test_cmd else ["--no-auto-test"]
    repo = ["--git", "--no-auto-commits", "--no-dirty-commits"] if git else ["--no-git"]
    return [
        "--model",
        setup.model,
        "--openai-api-base",
        f"{setup.base_url}/v1",
        "--openai-api-key",
        "local-llama-server",
        "--model-settings-file",
        str(setup.settings),
        "--model-metadata-file",
        str(setup.metadata),
        "--edit-format",
        "whole",
        *repo,
        "--map-tokens",
        "0",
        "--no-auto-lint",
        *tests,
        "--yes-always",
        "--no-pretty",
        "--no-fancy-input",
        "--no-check-update",
        "--analytics-disable",
        "--no-show-model-warnings",
        "--no-show-release-notes",
        "--no-detect-urls",
        "--no-suggest-shell-commands",
        "--no-gitignore",
        "--encoding",
        "utf-8",
        "--timeout",
        str(int(timeout)),
        "--chat-history-file",
        str(logs / "aider.chat.history.md"),
        "--input-history-file",
        str(logs / "aider.input.history"),
        "--llm-history-file",
        str(logs / "aider.llm.history"),
    ]


def aider_env(home: Path) -> dict[str, str]:
    """The environment of an aider run: a private home, no network look-ups, loopback direct."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AIDER_", "OPENAI_", "ANTHROPIC_", "VIRTUAL_ENV"))
    }
    env.update(
        HOME=str(home),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        PYTHONIOENCODING="utf-8",
    )
    return env


@dataclass
class DriverRun:
    """How one ``driver.py`` run ended and what it recorded."""

    stop_reason: str
    """``done`` (the driver finished), ``timeout`` or ``error``."""
    total_s: float
    """Seconds of the whole process, aider's start-up included."""
    tries: list[dict[str, Any]] = field(default_factory=list)
    """The driver's record of each try (seconds, tokens, ...), as far as it got."""
    error: str | None = None

    @property
    def wall_s(self) -> float:
        """Seconds of the tries (aider's start-up not included, as Cadenza's server start is
        not); a run stopped at the bound counts all of it."""
        if self.stop_reason != "done":
            return round(self.total_s, 2)
        return round(sum(float(t["seconds"]) for t in self.tries), 2)


def drive(
    setup: AiderSetup,
    spec: dict[str, Any],
    *,
    folder: Path,
    workspace: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> DriverRun:
    """Run ``driver.py`` on ``spec`` in ``workspace``, stopped after ``timeout`` seconds.

    ``folder`` gets the spec, the driver's result and aider's output (``aider.out``), and the
    private home ``folder/home``. ``env``: more variables for aider and the commands it runs.
    """
    home = folder / "home"
    home.mkdir(exist_ok=True)
    spec_path, result_path = folder / "aider.spec.json", folder / "aider.result.json"
    spec_path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
    started = time.monotonic()
    stop_reason, error = "done", None
    with (folder / "aider.out").open("wb") as out:
        proc = subprocess.Popen(
            [str(aider_python(setup.venv)), str(DRIVER), str(spec_path), str(result_path)],
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**aider_env(home), **(env or {})},
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=timeout)
            if code != 0:
                stop_reason, error = "error", f"aider driver exited with status {code}"
        except subprocess.TimeoutExpired:
            stop_reason, error = "timeout", f"aider ran longer than {timeout:g} s"
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    total = time.monotonic() - started
    result: dict[str, Any] = {}
    if result_path.is_file():
        result = json.loads(result_path.read_text(encoding="utf-8"))
    return DriverRun(
        stop_reason=stop_reason,
        total_s=round(total, 2),
        tries=list(result.get("tries", [])),
        error=error,
    )
