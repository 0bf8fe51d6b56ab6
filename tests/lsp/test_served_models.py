"""``cadenza.listModels`` lists the models of the person's own servers (a configured Ollama,
an OpenAI-compatible server such as LM Studio) beside the local ones, each with where it runs;
choosing one takes effect on the next turn. Real server, real pipes, scripted servers on
127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.lsp.conftest import Connect
from tests.lsp.test_waiting import ends
from tests.support.fake_openai import FakeOpenAI, text


@pytest.fixture
def ollama() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["qwen2.5-coder:7b", "llama3.2:3b"]) as server:
        yield server


@pytest.fixture
def lmstudio() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["qwen2.5-coder-14b-instruct"]) as server:
        yield server


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_the_persons_servers_models_are_listed_and_one_runs_the_next_turn(
    connect: Connect, fake: FakeOpenAI, ollama: FakeOpenAI, lmstudio: FakeOpenAI
) -> None:
    editor = await connect(
        init_options={"model": "openai/test"},
        user_config={
            "model": "openai/test",
            "providers": {
                "ollama": {"baseUrl": ollama.base_url},
                "lmstudio": {"baseUrl": lmstudio.base_url},
                "vllm": {"baseUrl": f"http://127.0.0.1:{closed_port()}/v1"},
            },
        },
    )
    listed = await editor.execute("cadenza.listModels", {})
    by_id = {m["id"]: m for m in listed["models"]}
    at_ollama = f"Ollama at 127.0.0.1:{ollama.port}"
    assert by_id["ollama/qwen2.5-coder:7b"] == {
        "id": "ollama/qwen2.5-coder:7b",
        "label": "qwen2.5-coder:7b (Ollama)",
        "local": False,
        "pulled": None,
        "where": at_ollama,
    }
    assert by_id["ollama/llama3.2:3b"]["where"] == at_ollama
    lm = by_id["lmstudio/qwen2.5-coder-14b-instruct"]
    assert lm["label"] == "qwen2.5-coder-14b-instruct (LM Studio)"
    assert by_id["local/qwen2.5-coder-1.5b"]["label"] == "qwen2.5-coder-1.5b (local)"
    assert by_id["openai/test"]["label"] == "test (openai, default)"
    assert lm["where"] == f"LM Studio at 127.0.0.1:{lmstudio.port}"
    assert by_id["local/qwen2.5-coder-1.5b"]["where"] == "this machine (embedded llama.cpp)"
    assert by_id["openai/test"]["where"] == "openai"
    ids = list(by_id)
    # The default first, then the servers' models, then the local ones.
    assert ids[0] == "openai/test"
    assert ids.index("ollama/qwen2.5-coder:7b") < ids.index("local/qwen2.5-coder-1.5b")
    assert not any(i.startswith("vllm/") for i in ids)  # its server is down: nothing, no error

    fake.script(text("from the default"))
    session_id = await editor.start("hello")
    await ends(editor, session_id, 1)
    await editor.execute(
        "cadenza.configureSession", {"sessionId": session_id, "model": "ollama/qwen2.5-coder:7b"}
    )
    ollama.script(text("from ollama"))
    await editor.execute("cadenza.promptSession", {"sessionId": session_id, "text": "again"})
    await ends(editor, session_id, 2)
    assert [r["model"] for r in ollama.requests] == ["qwen2.5-coder:7b"]
    assert len(fake.requests) == 1


async def test_without_configured_servers_nothing_is_asked(
    connect: Connect, ollama: FakeOpenAI
) -> None:
    editor = await connect(
        init_options={"model": "openai/test"}, user_config={"model": "openai/test"}
    )
    listed = await editor.execute("cadenza.listModels", {})
    assert not any(m["id"].startswith(("ollama/", "lmstudio/")) for m in listed["models"])
