"""aider beside Cadenza: its own venv, its settings for a local llama-server, one task's run.

Install (once; aider pins its many dependencies, so it never shares the project's venv):

    python -m benchmarks.humaneval.aider_run --install [--venv DIR]     # default: .aider-venv

aider (``aider-chat`` 0.86.2) talks to the run's llama-server as an OpenAI-compatible endpoint
(``openai/MODEL``, a dummy key), in its whole-file edit format, without git, a repository map,
lint or aider's own test runs; a model settings file gives the temperature (0, as Cadenza's local
provider) and the reply bound (1,024 tokens, Cadenza's local default), a metadata file the
context size, so aider looks nothing up on the network. Its home folder is private to the
task, which keeps aider's caches and analytics settings out of the person's. Two tries, as
aider's benchmark drives it: ``aider_driver.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.humaneval.judge import Judgement, judge_workspace

ROOT = Path(__file__).resolve().parents[2]
AIDER_VERSION = "0.86.2"
DEFAULT_VENV = ROOT / ".aider-venv"
DRIVER = Path(__file__).resolve().parent / "aider_driver.py"
TRIES = 2


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


def aider_args(setup: AiderSetup, logs: Path, timeout: float) -> list[str]:
    """aider's command-line flags for one task (history files in ``logs``)."""
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
        "--no-git",
        "--map-tokens",
        "0",
        "--no-auto-lint",
        "--no-auto-test",
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
class AiderRun:
    """One task's aider run: the driver's tries, the final judgement, the times."""

    judgement: Judgement
    wall_s: float
    """Seconds of the tries (aider's start-up not included, as Cadenza's server start is not)."""
    total_s: float
    stop_reason: str
    """``done`` (the driver finished its tries), ``timeout`` or ``error``."""
    tries: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


def _judge_argv(task_folder: Path, workspace: Path) -> list[str]:
    return [sys.executable, "-m", "benchmarks.humaneval.judge", str(task_folder), str(workspace)]


def run_aider(
    setup: AiderSetup, *, task_folder: Path, text: str, folder: Path, timeout: float
) -> AiderRun:
    """Run aider on the task in ``folder`` (its workspace without the tests), then judge."""
    meta = json.loads((task_folder / "meta.json").read_text(encoding="utf-8"))
    workspace = folder / "workspace"
    shutil.copytree(
        task_folder / "workspace", workspace, ignore=shutil.ignore_patterns(meta["test_module"])
    )
    home = folder / "home"
    home.mkdir()
    spec = {
        "files": [meta["module"]],
        "message": text,
        "aider_args": aider_args(setup, folder, timeout),
        "judge": _judge_argv(task_folder, workspace),
        "repo_root": str(ROOT),
        "tries": TRIES,
    }
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
            env=aider_env(home),
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
    tries = list(result.get("tries", []))
    wall = sum(float(t["seconds"]) for t in tries) if stop_reason == "done" else total
    return AiderRun(
        judgement=judge_workspace(task_folder, workspace),
        wall_s=round(wall, 2),
        total_s=round(total, 2),
        stop_reason=stop_reason,
        tries=tries,
        error=error,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.humaneval.aider_run")
    parser.add_argument("--install", action="store_true", help=f"install aider {AIDER_VERSION}")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args(argv)
    if args.install:
        python = install(args.venv)
        print(f"aider {installed_version(args.venv)} in {python}")
        return 0
    print(f"aider {installed_version(args.venv) or 'is not installed'} in {args.venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
