"""Inline completions (ghost text) in real headless Neovim 0.11 against the real server.

``completion_unit`` checks the options and the item handling without a model; the
``inline_completion`` scenario types into a Python file with Qwen2.5-Coder-1.5B behind
``cadenza serve`` (the one pulled model that can fill in the middle: SmolLM2 cannot).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.nvim.harness import isolated_env, run_scenario

FIM_MODEL = "qwen2.5-coder-1.5b"
SOURCE = (
    "import math\n\n\n"
    "def area(radius):\n"
    "    return math.pi * radius ** 2\n\n\n"
    "def perimeter(radius):\n"
    "    \n"
)


def test_completion_options_and_items(workspace: Path, env: dict[str, str]) -> None:
    outcome = run_scenario("completion_unit", workspace=workspace, env=env)
    assert outcome.ok, outcome.report()


@pytest.fixture
def fim_model() -> Path:
    """The pulled Qwen2.5-Coder-1.5B, or a skip that says how to get it."""
    from cadenza.providers.llama_command import LlamaServerError, find_binary
    from cadenza.providers.models import model_path

    try:
        find_binary()
    except LlamaServerError as exc:
        pytest.skip(str(exc))
    path = model_path(FIM_MODEL)
    if path is None:
        pytest.skip(
            f"{FIM_MODEL} is not pulled (cadenza models pull {FIM_MODEL}): inline completions "
            "need a model with fill-in-the-middle tokens"
        )
    return path


@pytest.mark.e2e
def test_ghost_text_with_the_real_model(fim_model: Path, workspace: Path, tmp_path: Path) -> None:
    (workspace / "shapes.py").write_text(SOURCE)
    env = isolated_env(
        tmp_path / "home-fim",
        CADENZA_TEST_MODEL=f"local/{FIM_MODEL}",
        CADENZA_MODELS_DIR=str(fim_model.parent),
    )
    # The scenario's own wait is 5 minutes (a loaded machine makes the model slow).
    outcome = run_scenario("inline_completion", workspace=workspace, env=env, timeout=420)
    assert outcome.ok, outcome.report()
    print(outcome.output, file=sys.stderr)
    # Nothing was saved: the accepted text is in the buffer only.
    assert (workspace / "shapes.py").read_text() == SOURCE


def test_on_by_default_and_quiet_when_the_model_cannot_fill_in_the_middle(
    workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "notes.py").write_text("import os\n")
    outcome = run_scenario("completion_unsupported", workspace=workspace, env=env, timeout=300)
    assert outcome.ok, outcome.report()
