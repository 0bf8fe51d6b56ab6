"""``cadenza.listModels``, ``cadenza.listCommands`` (and ``/name`` expansion),
``cadenza.pullModel`` and the ``fix`` of a ``session_end``, through the real server."""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Connect
from tests.lsp.harness import (
    Harness,
    capabilities,
    server_env,
    start_harness,
    stop_harness,
)
from tests.lsp.test_waiting import ends, user_texts
from tests.support.fake_hub import FakeHub, HubRepo
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.file_host import serve_folder

REQUEST_FAILED = -32803
SHARED_MODELS = Path(os.environ.get("HOME", "~")).expanduser() / ".cache/cadenza/models"


async def test_list_models_offers_the_default_local_and_the_sessions_choice(
    connect: Connect, fake: FakeOpenAI
) -> None:
    editor = await connect(
        init_options={"model": "openai/test", "models": ["openai/bigger"]},
        user_config={"model": "openai/test"},
    )
    listed = await editor.execute("cadenza.listModels", {})
    ids = [m["id"] for m in listed["models"]]
    assert ids[:2] == ["openai/test", "openai/bigger"]
    assert listed["current"] == {"model": "openai/test", "workflow": "default"}
    hosted = listed["models"][0]
    assert hosted == {
        "id": "openai/test",
        "label": "test (openai, default)",
        "local": False,
        "pulled": None,
        "where": "openai",
    }
    local = [m for m in listed["models"] if m["local"]]
    assert "local/smollm2-135m" in [m["id"] for m in local]
    assert all(m["pulled"] is False for m in local)  # this server's models folder is empty
    names = [w["name"] for w in listed["workflows"]]
    assert {"default", "plan-implement-review"} <= set(names)
    assert all(isinstance(w["description"], str) for w in listed["workflows"])

    fake.script(text("hi"))
    session_id = await editor.start("hello")
    await ends(editor, session_id, 1)
    await editor.execute(
        "cadenza.configureSession",
        {"sessionId": session_id, "model": "openai/other", "workflow": "plan-implement-review"},
    )
    chosen = await editor.execute("cadenza.listModels", {"sessionId": session_id})
    assert chosen["current"] == {"model": "openai/other", "workflow": "plan-implement-review"}
    assert "openai/other" in [m["id"] for m in chosen["models"]]
    with pytest.raises(JsonRpcException) as caught:
        await editor.execute("cadenza.listModels", {"sessionId": "nope"})
    assert caught.value.code == REQUEST_FAILED


async def test_the_model_chosen_survives_a_restart(connect: Connect, fake: FakeOpenAI) -> None:
    first = await connect()
    fake.script(text("one"))
    session_id = await first.start("hi")
    await ends(first, session_id, 1)
    await first.execute(
        "cadenza.configureSession", {"sessionId": session_id, "model": "openai/other"}
    )
    await stop_harness(first)

    second = await connect()
    listed = await second.execute("cadenza.listModels", {"sessionId": session_id})
    assert listed["current"]["model"] == "openai/other"
    fake.script(text("two"))
    await second.execute("cadenza.promptSession", {"sessionId": session_id, "text": "again"})
    await ends(second, session_id, 1)
    assert fake.requests[-1]["model"] == "other"


async def test_slash_commands_are_listed_and_expanded(
    editor: Harness, fake: FakeOpenAI, workspace: Path
) -> None:
    commands = workspace / ".cadenza" / "commands"
    commands.mkdir(parents=True)
    (commands / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: the file\n---\n"
        "Explain what $ARGUMENTS does, in two sentences.\n"
    )
    (commands / "review.md").write_text("Review the last change for bugs.\n")
    listed = await editor.execute("cadenza.listCommands", {})
    by_name = {c["name"]: c for c in listed["commands"]}
    assert by_name["explain"] == {
        "name": "explain",
        "description": "Explain a file",
        "hint": "the file",
    }
    assert by_name["review"]["description"] == "Review the last change for bugs."
    assert by_name["plan-implement-review"]["hint"] == "what to do"

    fake.script(text("It adds."))
    session_id = await editor.start("/explain app.py")
    await ends(editor, session_id, 1)
    assert user_texts(fake.requests[-1])[0] == "Explain what app.py does, in two sentences."

    fake.script(text("Looks fine."))
    await editor.execute("cadenza.promptSession", {"sessionId": session_id, "text": "/review"})
    await ends(editor, session_id, 2)
    assert user_texts(fake.requests[-1])[-1] == "Review the last change for bugs."

    fake.script(text("planned"), text("done"), text("reviewed"))
    before = len(fake.requests)
    workflow = await editor.start("/plan-implement-review add a README")
    await ends(editor, workflow, 1)
    movements = [u for u in editor.updates[workflow] if u["sessionUpdate"] == "movement"]
    assert movements[0]["workflow"] == "plan-implement-review"
    assert user_texts(fake.requests[before])[0].startswith(
        "add a README"
    )  # the workflow's first request
    assert not any("/plan-implement-review" in t for r in fake.requests for t in user_texts(r))

    fake.script(text("ok"))
    unknown = await editor.start("/nosuch thing")
    await ends(editor, unknown, 1)
    assert user_texts(fake.requests[-1])[0] == "/nosuch thing"  # left as typed


@pytest_asyncio.fixture
async def shared_models(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> AsyncIterator[Harness]:
    """A server whose models folder links the machine's pulled SmolLM2 (read-only)."""
    model = SHARED_MODELS / "smollm2-135m.gguf"
    if not (model.is_file() and model.with_name(model.name + ".sha256").is_file()):
        pytest.skip("SmolLM2 is not pulled on this machine")
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("smollm2-135m.gguf", "smollm2-135m.gguf.sha256"):
        (folder / name).symlink_to(SHARED_MODELS / name)
    env = server_env(fake.base_url, tmp_path / "home")
    env["CADENZA_MODELS_DIR"] = str(folder)
    harness, _ = await start_harness(root=workspace, env=env, caps=capabilities())
    yield harness
    await stop_harness(harness)


async def test_pull_model_reports_progress_and_answers_the_model(shared_models: Harness) -> None:
    editor = shared_models
    editor.client.progress_reports["pull"] = []
    result = await editor.execute(
        "cadenza.pullModel", {"model": "local/smollm2-135m"}, token="pull"
    )
    assert result == {"model": "local/smollm2-135m"}
    reports = editor.client.progress_reports["pull"]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "smollm2-135m is ready"
    listed = await editor.execute("cadenza.listModels", {})
    pulled = {m["id"]: m["pulled"] for m in listed["models"] if m["local"]}
    assert pulled["local/smollm2-135m"] is True

    with pytest.raises(JsonRpcException) as caught:
        await editor.execute("cadenza.pullModel", {"model": "local/nope"})
    assert caught.value.code == REQUEST_FAILED
    assert "unknown model 'local/nope'" in caught.value.message


async def test_a_missing_local_model_ends_with_a_pull_fix(editor: Harness) -> None:
    session_id, end = await editor.run("hi", model="local/smollm2-135m")
    assert end["stopReason"] == "error"
    assert "cadenza models pull smollm2-135m" in end["message"]
    fix: dict[str, Any] = end["fix"]
    assert fix == {
        "title": "Pull model",
        "command": "cadenza.pullModel",
        "arguments": [{"model": "local/smollm2-135m"}],
    }
    assert session_id


async def test_a_catalog_model_is_offered_pulled_from_its_url_and_ready(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    """``CADENZA_MODEL_CATALOG`` names a model served on 127.0.0.1: the missing model's end
    offers Pull model, and ``cadenza.pullModel`` downloads it with progress."""
    data = bytes(range(256)) * 8_000  # 2 MB
    www = tmp_path / "www"
    www.mkdir()
    (www / "tiny.gguf").write_bytes(data)
    with serve_folder(www) as (base, requested):
        catalog = tmp_path / "catalog.toml"
        catalog.write_text(
            f'[[model]]\nname = "tiny-test"\nurl = "{base}/tiny.gguf"\n'
            f'sha256 = "{hashlib.sha256(data).hexdigest()}"\nsize = {len(data)}\n',
            encoding="utf-8",
        )
        env = server_env(fake.base_url, tmp_path / "home")
        env["CADENZA_MODELS_DIR"] = str(tmp_path / "models")
        env["CADENZA_MODEL_CATALOG"] = str(catalog)
        editor, _ = await start_harness(root=workspace, env=env, caps=capabilities())
        try:
            listed = await editor.execute("cadenza.listModels", {})
            pulled = {m["id"]: m["pulled"] for m in listed["models"] if m["local"]}
            assert pulled["local/tiny-test"] is False
            _, end = await editor.run("hi", model="local/tiny-test")
            assert end["stopReason"] == "error"
            assert "cadenza models pull tiny-test" in end["message"]
            assert end["fix"]["arguments"] == [{"model": "local/tiny-test"}]

            editor.client.progress_reports["pull"] = []
            result = await editor.execute(*_fix_call(end["fix"]), token="pull")
            assert result == {"model": "local/tiny-test"}
            assert requested == ["/tiny.gguf"]
            reports = editor.client.progress_reports["pull"]
            messages = [getattr(r, "message", None) for r in reports]
            assert "tiny-test: downloading (2 of 2 MB)" in messages, messages
            assert reports[-1].message == "tiny-test is ready"
            assert (tmp_path / "models" / "tiny-test.gguf").read_bytes() == data
            listed = await editor.execute("cadenza.listModels", {})
            pulled = {m["id"]: m["pulled"] for m in listed["models"] if m["local"]}
            assert pulled["local/tiny-test"] is True
        finally:
            await stop_harness(editor)


def _fix_call(fix: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The command and argument a client runs for an end's ``fix`` (its button)."""
    return fix["command"], fix["arguments"][0]


async def test_a_hub_model_is_pulled_with_progress_and_then_offered_as_pulled(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    """``cadenza.pullModel {model: "hf:ORG/REPO:QUANT"}`` from a Hub on 127.0.0.1
    (``HF_ENDPOINT``): progress while it downloads and checks, the local name in the answer,
    the model pulled in ``cadenza.listModels``; a file whose hash is not the Hub's is refused."""
    name = "tiny-coder-q4_k_m.gguf"
    good = HubRepo(files={name: b"GGUF" + bytes(range(256)) * 4000})
    bad = HubRepo(files={name: b"GGUF tampered"}, lie_about={name})
    with FakeHub({"Org/Tiny-GGUF": good, "Org/Bad-GGUF": bad}) as hub:
        env = server_env(fake.base_url, tmp_path / "home")
        env |= {
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(tmp_path / "hf"),
            "CADENZA_MODELS_DIR": str(tmp_path / "models"),
        }
        editor, _ = await start_harness(root=workspace, env=env, caps=capabilities())
        try:
            editor.client.progress_reports["hub"] = []
            result = await editor.execute(
                "cadenza.pullModel", {"model": "hf:Org/Tiny-GGUF:Q4_K_M"}, token="hub"
            )
            assert result == {"model": "local/tiny-coder-q4_k_m"}
            reports = editor.client.progress_reports["hub"]
            said = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
            assert any(m and "downloading" in m for m in said), said
            assert any(m and "checking part 1/1" in m for m in said), said
            assert reports[-1].message == "tiny-coder-q4_k_m is ready"
            listed = await editor.execute("cadenza.listModels", {})
            pulled = {m["id"]: m["pulled"] for m in listed["models"] if m["local"]}
            assert pulled["local/tiny-coder-q4_k_m"] is True
            assert pulled["local/qwen2.5-coder-7b"] is False

            with pytest.raises(JsonRpcException) as caught:
                await editor.execute("cadenza.pullModel", {"model": "hf:Org/Bad-GGUF"})
            assert caught.value.code == REQUEST_FAILED
            assert "SHA-256 mismatch" in caught.value.message
        finally:
            await stop_harness(editor)
