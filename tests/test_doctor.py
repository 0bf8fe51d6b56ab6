"""``cadenza doctor`` as a person runs it: the real CLI in a subprocess, the real machine.

A missing model or llama-server is reported with its fix line and a non-zero exit; the checks
that pass name what they found.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cadenza.doctor import check_editors, check_language_servers
from cadenza.intel.servers import find_servers
from cadenza.providers.hardware import Hardware, total_memory
from cadenza.providers.llama_command import usable_cores
from cadenza.providers.models import model_path
from cadenza.providers.recommend import recommend


def doctor(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cadenza", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_a_missing_model_and_llama_server_fail_with_fix_lines(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CADENZA_MODEL"}
    env["CADENZA_MODELS_DIR"] = str(tmp_path / "models")
    env["CADENZA_LLAMA_SERVER"] = str(tmp_path / "no-llama-server")
    done = doctor(env)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    model = next(i for i, line in enumerate(lines) if "local model" in line)
    assert lines[model].split()[0] == "MISSING" and "not pulled" in lines[model]
    assert lines[model + 1].split() == ["fix:", "cadenza", "models", "pull", "qwen2.5-coder-1.5b"]
    llama = next(i for i, line in enumerate(lines) if "llama-server:" in line)
    assert lines[llama].split()[0] == "MISSING" and "is not a file" in lines[llama]
    assert lines[llama + 1].strip().startswith("fix: pip install")
    assert lines[-1] == "not ready: local model qwen2.5-coder-1.5b, llama-server"
    # The model this machine runs well is named with its pull command, and never pulled.
    best = recommend(Hardware(memory=total_memory(), cores=usable_cores()), 8192).name
    advice = next(line for line in lines if "model for this machine:" in line)
    assert advice.split()[0] == "ok"
    assert f"this machine can run {best}; pull it with `cadenza models pull {best}`." in advice
    assert not (tmp_path / "models").exists()


def test_a_hosted_model_makes_the_local_model_optional(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["CADENZA_MODELS_DIR"] = str(tmp_path / "models")
    env["CADENZA_LLAMA_SERVER"] = str(tmp_path / "no-llama-server")
    env["CADENZA_MODEL"] = "openai/gpt-4.1"
    done = doctor(env)
    lines = done.stdout.splitlines()
    assert lines[0].split()[:4] == ["ok", "configured", "model:", "openai/gpt-4.1"], done.stdout
    model = next(line for line in lines if "local model qwen" in line)
    assert model.split()[:2] == ["missing", "(optional)"], done.stdout
    assert not any(line.startswith("not ready: local model") for line in lines), done.stdout


@pytest.mark.skipif(model_path("qwen2.5-coder-1.5b") is None, reason="default model not pulled")
def test_a_set_up_machine_is_ready() -> None:
    done = doctor(dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "ready"
    assert any(
        line.split()[0] == "ok" and "Python language server" in line
        for line in done.stdout.splitlines()
    )


def test_language_servers_and_editors_say_what_they_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = check_language_servers()[0]
    assert python.ok == ("python" in find_servers()) and python.required
    monkeypatch.setattr("cadenza.doctor.find_servers", lambda: {})
    missing = check_language_servers()
    assert not missing[0].ok and missing[0].fix == "pip install ty"
    assert not missing[1].ok and not missing[1].required
    (tmp_path / "clients" / "vscode").mkdir(parents=True)
    vscode = check_editors(tmp_path)[0]
    assert (vscode.name, vscode.ok, vscode.required) == ("VS Code extension", False, False)
    assert vscode.fix.endswith("npm ci && npm run build")
