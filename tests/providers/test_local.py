"""The local provider: unit checks, then the real llama-server with SmolLM2-135M (98 MB)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cadenza.config import LOCAL_CANDIDATES, CadenzaConfig
from cadenza.messages import SystemMessage, UserMessage
from cadenza.providers.base import ModelRequest, Provider, ProviderError
from cadenza.providers.llama_command import LlamaServerError, find_binary
from cadenza.providers.local import LocalProvider
from cadenza.providers.model_catalog import ModelError
from cadenza.providers.models import pull
from cadenza.providers.registry import create_provider
from cadenza.tools.read import ListFiles, ReadFile

TEST_MODEL = "smollm2-135m"


def request(**overrides: object) -> ModelRequest:
    base: dict[str, object] = {
        "messages": [
            SystemMessage(content="You are a coding agent. Use the tools to act."),
            UserMessage(content="Show me what is in app.py."),
        ],
        "tools": [ReadFile().spec(), ListFiles().spec()],
    }
    base.update(overrides)
    return ModelRequest(**base)  # type: ignore[arg-type]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_registry_builds_a_local_provider() -> None:
    provider = create_provider("local/qwen2.5-coder-1.5b", CadenzaConfig())
    assert isinstance(provider, LocalProvider)
    assert isinstance(provider, Provider)
    assert provider.name == "local/qwen2.5-coder-1.5b"


async def test_a_model_that_is_not_pulled_says_how_to_pull_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENZA_MODELS_DIR", str(tmp_path))
    provider = LocalProvider(
        name="local/qwen2.5-coder-0.5b", model="qwen2.5-coder-0.5b", config=CadenzaConfig()
    )
    with pytest.raises(ProviderError, match=r"run `cadenza models pull qwen2\.5-coder-0\.5b`"):
        await provider.complete(request())
    await provider.aclose()


async def test_an_unknown_model_lists_the_known_ones() -> None:
    provider = LocalProvider(name="local/nope", model="nope", config=CadenzaConfig())
    with pytest.raises(ProviderError, match=r"unknown local model 'nope'; known: qwen2\.5"):
        await provider.complete(request())


def test_defaults_fill_only_what_the_request_leaves_open() -> None:
    provider = LocalProvider(name="local/x", model="x", config=CadenzaConfig())
    filled = provider._with_defaults(request())
    assert (filled.temperature, filled.max_tokens) == (0.0, 1024)
    kept = provider._with_defaults(request(temperature=0.7, max_tokens=50))
    assert (kept.temperature, kept.max_tokens) == (0.7, 50)
    configured = LocalProvider(
        name="local/x", model="x", config=CadenzaConfig(temperature=0.2, maxTokens=300)
    )
    assert (
        configured._with_defaults(request()).temperature,
        configured._with_defaults(request()).max_tokens,
    ) == (0.2, 300)


@pytest.fixture(scope="session")
def smollm2() -> Iterator[Path]:
    """SmolLM2 in the models folder (pulled once per machine), or a skip without llama-server."""
    try:
        find_binary()
    except LlamaServerError as exc:
        pytest.skip(str(exc))
    try:
        yield pull(TEST_MODEL)
    except ModelError as exc:
        pytest.fail(f"cannot pull {TEST_MODEL}: {exc}")


@pytest.mark.e2e
async def test_real_server_returns_a_well_formed_envelope(smollm2: Path) -> None:
    config = CadenzaConfig(contextSize=2048)
    provider = LocalProvider(name=f"local/{TEST_MODEL}", model=TEST_MODEL, config=config)
    try:
        reply = await provider.complete(request(max_tokens=200))
        server = provider.server
        assert server is not None and server.running
        assert server.n_ctx == 2048 * LOCAL_CANDIDATES  # a context per agent slot
        pid = server.pid
        offered = {"read_file", "list_files"}
        if reply.finish_reason != "length":
            for call in reply.tool_calls:
                assert call.name in offered
                assert isinstance(json.loads(call.arguments), dict)
            assert isinstance(reply.content, str)
            assert reply.finish_reason == ("tool_calls" if reply.tool_calls else "stop")
        assert reply.usage is not None and reply.usage.completion_tokens > 0
        # A second call reuses the running server.
        again = await provider.complete(request(max_tokens=8, tools=[]))
        assert again.tool_calls == [] or again.finish_reason == "length"
        assert provider.server is server
    finally:
        await provider.aclose()
    assert provider.server is None
    assert gone(pid)


LONG_SYSTEM = (
    "You are a coding agent working in a repository. Read before you edit, keep changes small, "
    "run the tests after each change, and explain what you did in one short paragraph. " * 6
)


def long_request(task: str) -> ModelRequest:
    return request(
        max_tokens=8, messages=[SystemMessage(content=LONG_SYSTEM), UserMessage(content=task)]
    )


async def first_request_tokens(provider: LocalProvider, task: str) -> tuple[int, int]:
    """The server's first request as ``complete`` sends it, but whole, for llama-server's
    ``timings``: (prompt tokens, prompt tokens evaluated)."""
    delegate = await provider._ensure_started()
    body = delegate.build_body(provider._with_defaults(long_request(task)))
    for key in ("stream", "stream_options"):
        body.pop(key, None)
    slots, server = provider.slot_cache, provider.server
    assert slots is not None and server is not None
    await slots.before_first(body)
    async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as client:
        answer = await client.post("/v1/chat/completions", json=body, timeout=300)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    return data["usage"]["prompt_tokens"], data["timings"]["prompt_n"]


@pytest.mark.e2e
async def test_a_second_server_restores_the_saved_prompt_prefix(
    smollm2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENZA_PROMPT_CACHE", str(tmp_path / "cache"))
    config = CadenzaConfig(contextSize=2048)
    name = f"local/{TEST_MODEL}"
    first = LocalProvider(name=name, model=TEST_MODEL, config=config)
    try:
        await first.complete(long_request("Show me what is in app.py."))
        assert first.slot_cache is not None and first.slot_cache.saved_key is not None
    finally:
        await first.aclose()
    assert len(list((tmp_path / "cache" / TEST_MODEL).glob("*.slot"))) == 1

    # A new llama-server process: its slot is empty until the restore.
    second = LocalProvider(name=name, model=TEST_MODEL, config=config)
    try:
        total, evaluated = await first_request_tokens(second, "List the files in src.")
        slots = second.slot_cache
        assert slots is not None and slots.restored_tokens is not None
        assert not slots.save_pending  # already on disk: not saved again
    finally:
        await second.aclose()
    print(f"second process, first request: {evaluated} of {total} prompt tokens evaluated")
    # The system prompt and tool list came from the file; only the new task was evaluated.
    assert evaluated < total // 3
