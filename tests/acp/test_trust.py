"""Workspace trust and protected paths over ACP, through a real ``cadenza acp`` process: the
trust question is a ``session/request_permission`` at the first prompt; a protected write offers
the once options only."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import text_block

from tests.acp.conftest import WAIT_S, Start
from tests.support.fake_openai import FakeOpenAI, call, text

NO_ENV_MODEL = {"CADENZA_MODEL": ""}
"""The agent's test environment names a model; these tests let the config files decide."""


def setup(workspace: Path, tmp_path: Path) -> Path:
    user = tmp_path / "home" / "xdg_config_home" / "cadenza"
    user.mkdir(parents=True, exist_ok=True)
    (user / "cadenza.toml").write_text('model = "openai/user-model"\n', encoding="utf-8")
    (workspace / "cadenza.toml").write_text('model = "openai/ws-model"\n', encoding="utf-8")
    return tmp_path / "home" / "xdg_state_home" / "cadenza" / "trust.json"


@pytest.mark.parametrize(
    ("answer", "model", "recorded"),
    [
        ("trust_once", "ws-model", None),
        ("trust", "ws-model", "trusted"),
        ("distrust", "user-model", "untrusted"),
        (None, "user-model", None),
    ],
)
async def test_the_first_prompt_asks_whether_to_trust_the_folder(
    start: Start,
    fake: FakeOpenAI,
    workspace: Path,
    tmp_path: Path,
    answer: str | None,
    model: str,
    recorded: str | None,
) -> None:
    trust_file = setup(workspace, tmp_path)
    fake.script(text("hello"), text("again"))
    agent = await start(answer=answer, extra_env=NO_ENV_MODEL)
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    for prompt in ("hi", "and again"):
        response = await asyncio.wait_for(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block(prompt)]),
            WAIT_S,
        )
        assert response.stop_reason == "end_turn"
    [(tool_call, options)] = agent.peer.permissions  # asked once, at the first prompt
    assert tool_call.tool_call_id == "cadenza-workspace-trust"
    assert tool_call.title is not None and 'model = "openai/ws-model"' in tool_call.title
    assert [o.option_id for o in options] == ["trust", "trust_once", "distrust"]
    assert [r["model"] for r in fake.requests] == [model, model]
    if recorded is None:
        assert not trust_file.exists()
    else:
        stored = json.loads(trust_file.read_text(encoding="utf-8"))
        assert stored["folders"] == {str(workspace.resolve()): recorded}


async def test_a_protected_write_offers_only_the_once_options(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(
        call("create_file", {"path": ".zed/settings.json", "content": "{}\n"}, "c1"),
        text("done"),
    )
    agent = await start(answer="allow_always")  # not offered: counts as dismissed
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("configure zed")]),
        WAIT_S,
    )
    [(tool_call, options)] = agent.peer.permissions
    assert tool_call.tool_call_id == "c1" and tool_call.title is not None
    assert ".zed/settings.json" in tool_call.title and "Zed" in tool_call.title
    assert [o.kind for o in options] == ["allow_once", "reject_once"]
    assert not (workspace / ".zed").exists()
    result = next(m for m in fake.requests[-1]["messages"] if m["role"] == "tool")
    assert "it is a protected file" in result["content"]
