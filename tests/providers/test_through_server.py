"""Every provider kind through the real server: ``cadenza serve`` under a pytest-lsp client.

The OpenAI-compatible provider runs through the server in ``tests/lsp``; here the Anthropic
provider (pointed at the fake Anthropic SSE server by ``ANTHROPIC_BASE_URL``) and the
``cli/claude`` adapter (pointed at a fake CLI by ``CADENZA_CLI_CLAUDE``) each run a session to
``end_turn``, and a provider failure ends a session with ``error`` and a message without secrets.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.lsp.harness import Harness, capabilities, server_env, start_harness, stop_harness
from tests.providers.fake_cli import FakeCli, claude_output, install_fake_cli
from tests.providers.fake_sse import FakeModelServer, Sse, Status, an_call, an_text

SECRET = "sk-ant-through-server-42"


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    return root


@pytest.fixture
def fake_cli(tmp_path: Path) -> FakeCli:
    return install_fake_cli(tmp_path / "bin", "claude")


@pytest_asyncio.fixture
async def editor(
    model_server: FakeModelServer, fake_cli: FakeCli, workspace: Path, tmp_path: Path
) -> AsyncIterator[Harness]:
    env = server_env(model_server.base_url, tmp_path / "home")
    for name in list(env):
        if name.startswith("ANTHROPIC_"):
            del env[name]
    env.update(
        {
            "ANTHROPIC_BASE_URL": model_server.root_url,
            "ANTHROPIC_API_KEY": SECRET,
            "CADENZA_CLI_CLAUDE": str(fake_cli.executable),
            **fake_cli.env(),
        }
    )
    harness, _ = await start_harness(root=workspace, env=env, caps=capabilities())
    yield harness
    await stop_harness(harness)


async def test_anthropic_session_runs_to_end_turn(
    editor: Harness, model_server: FakeModelServer
) -> None:
    model_server.script(
        Sse(events=an_call("toolu_1", "read_file", {"path": "a.py"})),
        Sse(events=an_text("x is ", "one.")),
    )
    session_id, end = await editor.run("What is x?", model="anthropic/claude-test")
    assert end["stopReason"] == "end_turn", end
    assert end["message"] == "x is one."
    kinds = editor.kinds(session_id)
    assert kinds.index("tool_call") < kinds.index("agent_message_chunk")
    chunks = [
        u["content"]["text"]
        for u in editor.updates[session_id]
        if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert chunks == ["x is ", "one."]  # streamed, in order
    first, second = (r.body for r in model_server.requests)
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert model_server.requests[0].headers["x-api-key"] == SECRET
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    assert "x = 1" in json.dumps(result)


async def test_cli_claude_session_runs_to_end_turn(editor: Harness, fake_cli: FakeCli) -> None:
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}], "content": ""}
    done = {"tool_calls": [], "content": "x is one."}
    fake_cli.script(
        {"stdout": claude_output("Let me look first.")},  # a contract miss: repaired once
        {"stdout": claude_output(json.dumps(read))},
        {"stdout": claude_output(f"Done:\n```json\n{json.dumps(done)}\n```")},
    )
    session_id, end = await editor.run("What is x?", model="cli/claude")
    assert end["stopReason"] == "end_turn", end
    assert end["message"] == "x is one."
    assert "tool_call" in editor.kinds(session_id)
    calls = fake_cli.calls()
    assert len(calls) == 3
    assert "x = 1" in calls[2]["stdin"]  # the tool result reached the CLI's next prompt


async def test_provider_failure_ends_with_error_and_no_secret(
    editor: Harness, model_server: FakeModelServer
) -> None:
    body = json.dumps({"type": "error", "error": {"message": f"invalid x-api-key: {SECRET}"}})
    model_server.script(Status(code=401, body=body))
    _, end = await editor.run("fail", model="anthropic/claude-test")
    assert end["stopReason"] == "error"
    assert "HTTP 401" in end["message"]
    assert SECRET not in end["message"]
