"""The model picker's lines: short, each saying where the model runs, the default marked once."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.config import CadenzaConfig
from cadenza.host.catalog import model_choices
from cadenza.providers.served import ServedModel


@pytest.fixture(autouse=True)
def no_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("CADENZA_MODEL", raising=False)


def test_the_default_local_model_is_marked_once_and_labels_are_short() -> None:
    choices = model_choices(CadenzaConfig())
    first = choices[0]
    assert (first.id, first.label) == (
        "local/qwen2.5-coder-1.5b",
        "qwen2.5-coder-1.5b (local, default)",
    )
    assert [c.label for c in choices].count(first.label) == 1
    assert sum("default" in c.label for c in choices) == 1
    smaller = next(c for c in choices if c.id == "local/qwen2.5-coder-0.5b")
    assert smaller.label == "qwen2.5-coder-0.5b (local)"
    assert all(c.label.count("(") == 1 for c in choices), [c.label for c in choices]


def test_a_configured_default_is_marked_and_servers_are_named_short() -> None:
    config = CadenzaConfig(model="openai/gpt-4.1", models=["anthropic/claude-x"])
    served = [ServedModel(id="ollama/llama3.2:3b", where="Ollama at 127.0.0.1:11434")]
    choices = {c.id: c for c in model_choices(config, "openai/other", served)}
    assert choices["openai/gpt-4.1"].label == "gpt-4.1 (openai, default)"
    assert choices["openai/other"].label == "other (openai)"
    assert choices["anthropic/claude-x"].label == "claude-x (anthropic)"
    ollama = choices["ollama/llama3.2:3b"]
    assert (ollama.label, ollama.where) == ("llama3.2:3b (Ollama)", "Ollama at 127.0.0.1:11434")
    assert choices["local/qwen2.5-coder-1.5b"].label == "qwen2.5-coder-1.5b (local)"
