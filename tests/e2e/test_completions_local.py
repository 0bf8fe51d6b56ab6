"""Inline completions end to end: a real ``cadenza serve``, a real llama-server, SmolLM2-135M.

SmolLM2's GGUF declares no fill-in-the-middle tokens, so llama-server answers ``/infill`` with
501: ``cadenza complete`` must then print nothing, say why in plain words and exit 1. To
drive the whole FIM path with the same tiny model, a second llama-server is started with
three of its special tokens declared as the FIM tokens (``--override-kv``): its middles are
nonsense, but every request, cancel and cache goes through the real server, and its log
counts the model requests.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from cadenza.config import LOCAL_CANDIDATES
from cadenza.host.completions import DEBOUNCE_S
from cadenza.providers.infill import InfillClient, InfillRequest
from cadenza.providers.llama_command import AGENT_SLOT, COMPLETION_SLOT
from cadenza.providers.llama_server import LlamaServer
from tests.e2e.rawclient import RawClient
from tests.e2e.support import MODEL, Sandbox, cadenza_executable, require_model

pytestmark = pytest.mark.e2e

FIM_OVERRIDES = (
    "--override-kv",
    "tokenizer.ggml.fim_pre_token_id=int:3",
    "--override-kv",
    "tokenizer.ggml.fim_suf_token_id=int:4",
    "--override-kv",
    "tokenizer.ggml.fim_mid_token_id=int:6",
)
SOURCE = (
    "import math\n\n\n"
    "def area(radius):\n"
    "    return math.pi * radius\n\n\n"
    "def perimeter(radius):\n"
    "    \n"
)
MODEL_STARTED = "launch_slot_"
"""llama-server's log line when a slot starts a task: one per request that reached the model."""


def model_requests(log: Path) -> int:
    return log.read_text(errors="replace").count(MODEL_STARTED)


def run_complete(
    sandbox: Sandbox, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cadenza_executable()), "complete", *args],
        cwd=sandbox.workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fim_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LlamaServer]:
    """One FIM llama-server for the module: the tests only send it requests, and count theirs
    in its log as a difference (``model_requests`` before and after)."""
    log_path = tmp_path_factory.mktemp("fim") / "fim.log"
    server = await LlamaServer.start(
        require_model(), ctx_size=2048, log_path=log_path, extra_args=FIM_OVERRIDES
    )
    try:
        yield server
    finally:
        await server.stop()


def test_cadenza_complete_with_a_model_without_fim_fails_in_plain_words(sandbox: Sandbox) -> None:
    require_model()
    (sandbox.workspace / "shapes.py").write_text(SOURCE)
    env = {**sandbox.env, "CADENZA_MODEL": MODEL}
    done = run_complete(sandbox, env, "shapes.py", "9", "5")
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert "no fill-in-the-middle tokens" in done.stderr, done.stderr
    assert "Infill is not supported" not in done.stderr  # llama-server's words: the log
    logs = list(sandbox.state.rglob("llama-server.log"))
    assert len(logs) == 1, "cadenza serve started its own llama-server"
    text = logs[0].read_text(errors="replace")
    # An agent slot per candidate reply and the completions' slot.
    assert f"n_slots = {LOCAL_CANDIDATES + 1}" in text and "kv_unified = 'true'" in text
    assert "Infill is not supported" in text or "/infill" in text or MODEL_STARTED not in text

    bad = run_complete(sandbox, env, "shapes.py", "99", "1")
    assert bad.returncode == 2 and "line 99 is outside shapes.py" in bad.stderr
    missing = run_complete(sandbox, env, "nowhere.py", "1", "1")
    assert missing.returncode == 2 and "file not found: nowhere.py" in missing.stderr


def test_cadenza_complete_reaches_the_model_once(sandbox: Sandbox, fim_server: LlamaServer) -> None:
    (sandbox.workspace / "shapes.py").write_text(SOURCE)
    env = {**sandbox.env, "CADENZA_MODEL": MODEL, "CADENZA_LOCAL_SERVER_URL": fim_server.base_url}
    before = model_requests(fim_server.log_path)
    done = run_complete(sandbox, env, "shapes.py", "9", "5")
    assert done.returncode == 0, done.stderr
    assert model_requests(fim_server.log_path) - before == 1
    assert done.stdout == "" or done.stdout.endswith("\n")


def completion_params(uri: str, line: int, character: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": character},
        "context": {"triggerKind": 2},
    }


async def test_a_burst_of_keystrokes_with_cancels_reaches_the_model_at_most_twice(
    sandbox: Sandbox, fim_server: LlamaServer, tmp_path: Path
) -> None:
    env = {**sandbox.env, "CADENZA_MODEL": MODEL, "CADENZA_LOCAL_SERVER_URL": fim_server.base_url}
    client = await RawClient.start(
        root=sandbox.workspace, env=env, stderr=tmp_path / "serve.err", init_options={}
    )
    try:
        init = next(m for d, m in client.log if d == "s2c" and m.get("id") == 1)
        assert init["result"]["capabilities"]["inlineCompletionProvider"] is not None
        uri = (sandbox.workspace / "shapes.py").resolve().as_uri()
        text = SOURCE
        await client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        # One request warms the model (its prompt is then cached), as in an editor in use.
        warm = await client.request("textDocument/inlineCompletion", completion_params(uri, 8, 4))
        assert isinstance(warm["items"], list)
        before = model_requests(fim_server.log_path)
        futures: list[asyncio.Future[dict[str, Any]]] = []
        previous: int | None = None
        typed = "ret"
        sent: list[float] = []
        # A keystroke sent after the previous request's answer arrived is a lone one by design
        # (a model quicker than the typing answers each): it may reach the model too.
        lone = 0
        for n in range(20):
            lone += bool(futures) and futures[-1].done()
            text = SOURCE[:-1] + typed[: n % 3 + 1] + "\n"
            await client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": n + 2},
                    "contentChanges": [{"text": text}],
                },
            )
            if previous is not None:
                await client.notify("$/cancelRequest", {"id": previous})
            previous, future = await client.begin(
                "textDocument/inlineCompletion", completion_params(uri, 8, 4 + n % 3 + 1)
            )
            futures.append(future)
            sent.append(time.monotonic())
            await asyncio.sleep(0.01)  # a fast burst: a held key, quicker than most answers
        sent_last = time.monotonic()
        last = await asyncio.wait_for(futures[-1], 120)
        last_s = time.monotonic() - sent_last
        responses = await asyncio.wait_for(asyncio.gather(*futures[:-1]), 30)
    finally:
        assert await client.close() == 0
    assert "result" in last, last
    for item in last["result"]["items"]:
        assert isinstance(item["insertText"], str) and item["insertText"]
        assert item["range"]["start"] == item["range"]["end"] == {"line": 8, "character": 7}
    for response in responses:  # each cancelled one is answered: cancelled, or no items
        assert response.get("error", {}).get("code") == -32800 or response["result"]["items"] == []
    reached = model_requests(fim_server.log_path) - before
    # On a loaded machine a sleep of 50 ms can last longer than the server's wait for a newer
    # request: such a gap is a pause in typing, after which one more request may go through.
    pauses = sum(b - a > DEBOUNCE_S for a, b in itertools.pairwise(sent))
    print(
        f"burst of 20: {reached} model request(s), {pauses} pause(s) over "
        f"{DEBOUNCE_S * 1000:.0f} ms, {lone} sent after an answer; "
        f"last answer {last_s * 1000:.0f} ms"
    )
    assert reached <= 2 + pauses + lone


async def test_a_task_on_one_slot_leaves_the_other_slots_cache(fim_server: LlamaServer) -> None:
    """An agent step keeps the completions' prompt cached, and a completion the agent's."""
    infill = InfillClient(fim_server.base_url, slot=COMPLETION_SLOT)
    # Prompts no other test of the module's shared server sent: each starts cold.
    unique = uuid.uuid4().hex
    prefix = f"# {unique}\n{SOURCE}"
    request = InfillRequest(prefix=prefix, prompt="    ", suffix="\n", n_predict=4, timeout_s=120)
    chat = {
        "messages": [{"role": "user", "content": f"{unique}: name three colours, one word each."}],
        "max_tokens": 4,
        "id_slot": AGENT_SLOT,
        "cache_prompt": True,
    }

    async def agent_step(http: httpx.AsyncClient) -> int:
        reply = await http.post("/v1/chat/completions", json=chat, timeout=120)
        assert reply.status_code == 200, reply.text
        evaluated: int = reply.json()["timings"]["prompt_n"]
        return evaluated

    try:
        async with httpx.AsyncClient(base_url=fim_server.base_url, trust_env=False) as http:
            first_completion = (await infill.infill(request)).tokens_evaluated
            first_step = await agent_step(http)
            completion_again = (await infill.infill(request)).tokens_evaluated
            step_again = await agent_step(http)
    finally:
        await infill.aclose()
    assert first_completion > 20 and first_step > 10
    assert completion_again <= 1 and step_again <= 1  # each found its prompt where it left it
