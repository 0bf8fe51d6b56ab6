"""aider's settings (no model, no aider process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.aider_peer.harness import AiderSetup, aider_args, aider_env, write_settings


@pytest.fixture
def setup(tmp_path: Path) -> AiderSetup:
    settings, metadata = write_settings(tmp_path, model_name="m", ctx_size=8192, max_tokens=1024)
    return AiderSetup(tmp_path, "http://127.0.0.1:1", "openai/m", settings, metadata)


def test_aider_is_kept_off_the_network_and_out_of_the_persons_home(
    tmp_path: Path, setup: AiderSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    [entry] = json.loads(setup.settings.read_text())
    assert entry["name"] == "openai/m" and entry["edit_format"] == "whole"
    assert entry["extra_params"] == {"max_tokens": 1024}
    assert json.loads(setup.metadata.read_text())["openai/m"]["max_input_tokens"] == 8192
    args = aider_args(setup, tmp_path, 600)
    for flag in ("--no-check-update", "--analytics-disable", "--no-show-model-warnings"):
        assert flag in args
    assert args[args.index("--openai-api-base") + 1] == "http://127.0.0.1:1/v1"
    assert args[args.index("--edit-format") + 1] == "whole"
    # HumanEval's runs: no git, no test runs of aider's own (the tests are hidden).
    assert "--no-git" in args and "--no-auto-test" in args and "--test-cmd" not in args
    monkeypatch.setenv("AIDER_MODEL", "elsewhere")
    env = aider_env(tmp_path / "home")
    assert env["HOME"] == str(tmp_path / "home") and "AIDER_MODEL" not in env
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
