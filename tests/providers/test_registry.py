"""Model names to providers, config options, and where base URLs and keys come from."""

from __future__ import annotations

import pytest

from cadenza.config import CadenzaConfig, ConfigError
from cadenza.providers.anthropic import AnthropicProvider
from cadenza.providers.cli import CliProvider
from cadenza.providers.openai import OpenAIProvider
from cadenza.providers.registry import create_provider
from tests.providers.fake_sse import FakeModelServer, Sse, oa_text
from tests.providers.test_openai_stream import request

ENV = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "CADENZA_BASE_URL",
    "OLLAMA_HOST",
    "OPENROUTER_API_KEY",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def base_url(provider: object) -> str:
    http = provider._http  # type: ignore[attr-defined]
    return str(http._client.base_url)


@pytest.mark.parametrize(
    ("name", "kind", "url"),
    [
        ("openai/gpt-4.1", OpenAIProvider, "https://api.openai.com/v1/"),
        ("ollama/qwen2.5-coder:7b", OpenAIProvider, "http://127.0.0.1:11434/v1/"),
        ("openrouter/meta-llama/llama-3.3-70b", OpenAIProvider, "https://openrouter.ai/api/v1/"),
        ("lmstudio/qwen", OpenAIProvider, "http://127.0.0.1:1234/v1/"),
        ("vllm/qwen", OpenAIProvider, "http://127.0.0.1:8000/v1/"),
        ("llamacpp/any", OpenAIProvider, "http://127.0.0.1:8080/v1/"),
        ("anthropic/claude-sonnet-4-5", AnthropicProvider, "https://api.anthropic.com/v1/"),
    ],
)
def test_known_names(name: str, kind: type, url: str) -> None:
    provider = create_provider(name, CadenzaConfig())
    assert isinstance(provider, kind) and provider.name == name
    assert base_url(provider) == url


def test_model_keeps_its_own_slashes() -> None:
    provider = create_provider("openrouter/meta-llama/llama-3.3-70b", CadenzaConfig())
    assert isinstance(provider, OpenAIProvider) and provider.model == "meta-llama/llama-3.3-70b"


def test_cli_names() -> None:
    for cli in ("claude", "codex", "gemini", "opencode", "grok"):
        provider = create_provider(f"cli/{cli}", CadenzaConfig())
        assert isinstance(provider, CliProvider) and provider.adapter.name == cli


def test_base_url_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    config = CadenzaConfig.model_validate(
        {"providers": {"openai": {"base_url": "http://127.0.0.1:1/v1"}}}
    )
    assert base_url(create_provider("openai/m", config)) == "http://127.0.0.1:1/v1/"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
    assert base_url(create_provider("openai/m", config)) == "http://127.0.0.1:2/v1/"
    monkeypatch.setenv("CADENZA_BASE_URL", "http://127.0.0.1:3/v1")
    assert base_url(create_provider("openai/m", config)) == "http://127.0.0.1:3/v1/"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:4")
    assert base_url(create_provider("anthropic/m", config)) == "http://127.0.0.1:3/v1/"


def test_anthropic_base_url_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:4")
    assert base_url(create_provider("anthropic/m", CadenzaConfig())) == "http://127.0.0.1:4/v1/"


def test_ollama_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.2:11434")
    assert base_url(create_provider("ollama/m", CadenzaConfig())) == "http://127.0.0.2:11434/v1/"


async def test_custom_provider_with_key_env_headers_and_no_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_GATEWAY_KEY", "gw-secret-value-123")
    with FakeModelServer() as server:
        config = CadenzaConfig.model_validate(
            {
                "providers": {
                    "gateway": {
                        "kind": "openai",
                        "baseUrl": server.base_url,
                        "apiKeyEnv": "MY_GATEWAY_KEY",
                        "headers": {"X-Title": "Cadenza"},
                        "stream": True,
                        "extraBody": {"cache_prompt": True},
                    }
                }
            }
        )
        server.script(Sse(events=oa_text("hi")))
        provider = create_provider("gateway/some-model", config)
        reply = await provider.complete(request())
        await provider.aclose()
    assert reply.content == "hi"
    sent = server.requests[0]
    assert sent.headers["Authorization"] == "Bearer gw-secret-value-123"
    assert sent.headers["X-Title"] == "Cadenza"
    assert sent.body["model"] == "some-model" and sent.body["cache_prompt"] is True


def test_unknown_provider_and_missing_base_url() -> None:
    with pytest.raises(ConfigError, match="unknown provider 'nope'"):
        create_provider("nope/m", CadenzaConfig())
    config = CadenzaConfig.model_validate({"providers": {"mine": {"kind": "openai"}}})
    with pytest.raises(ConfigError, match="needs base_url"):
        create_provider("mine/m", config)
    with pytest.raises(ConfigError, match="unknown CLI 'vim'"):
        create_provider("cli/vim", CadenzaConfig())


def test_api_key_env_must_be_a_name_not_a_key() -> None:
    with pytest.raises(ValueError) as info:
        CadenzaConfig.model_validate({"providers": {"openai": {"api_key_env": "sk-abc-123"}}})
    assert "api_key_env" in str(info.value)
