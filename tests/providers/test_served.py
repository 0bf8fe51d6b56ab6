"""Which of the person's servers a picker asks for their models (``providers.served``)."""

from __future__ import annotations

import pytest

from cadenza.config import CadenzaConfig
from cadenza.providers.served import servers


def config(**providers: dict[str, str]) -> CadenzaConfig:
    return CadenzaConfig.model_validate({"providers": providers})


def test_servers_on_this_machine_or_the_local_network_are_asked_hosted_apis_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OLLAMA_HOST", "OPENAI_BASE_URL", "CADENZA_BASE_URL", "VLLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    asked = servers(
        config(
            openai={},
            openrouter={},
            lmstudio={},
            vllm={"base_url": "https://vllm.example.com/v1"},
            lan={"kind": "openai", "base_url": "http://192.168.1.5:8000/v1"},
            box={"kind": "openai", "base_url": "http://gpu-box:8080/v1"},
            claude={"kind": "anthropic", "base_url": "http://127.0.0.1:9/"},
        )
    )
    assert asked == [  # in the settings' order
        ("lmstudio", "http://127.0.0.1:1234/v1"),
        ("lan", "http://192.168.1.5:8000/v1"),
        ("box", "http://gpu-box:8080/v1"),
    ]


def test_ollama_is_asked_when_configured_or_named_by_ollama_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CADENZA_BASE_URL", raising=False)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert servers(CadenzaConfig()) == []
    assert servers(config(ollama={})) == [("ollama", "http://127.0.0.1:11434/v1")]
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.7:11434")
    assert servers(config(lmstudio={})) == [
        ("ollama", "http://10.0.0.7:11434/v1"),
        ("lmstudio", "http://127.0.0.1:1234/v1"),
    ]
