"""ACP configuration options (model and mode), ``session/set_config_option``, slash commands
(``available_commands_update`` and ``/name`` prompts), through the SDK's client over stdio."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.acp.conftest import WAIT_S, Start
from tests.support.fake_openai import FakeOpenAI, person_messages, text


def user_texts(request: dict[str, Any]) -> list[str]:
    return person_messages(request)


async def commands_of(agent: Any, session_id: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + WAIT_S
    while True:
        found = [
            u
            for u in agent.peer.updates(session_id)
            if u["sessionUpdate"] == "available_commands_update"
        ]
        if found:
            commands: list[dict[str, Any]] = found[-1]["availableCommands"]
            return commands
        assert time.monotonic() < deadline, "no available_commands_update"
        await asyncio.sleep(0.02)


def options_by_id(options: Any) -> dict[str, Any]:
    return {o.id: o for o in options}


async def test_new_session_offers_model_and_mode_and_set_switches_the_model(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    options = options_by_id(session.config_options)
    model, mode = options["model"], options["mode"]
    assert model.category == "model" and model.current_value == "openai/test"
    values = [o.value for o in model.options]
    assert values[0] == "openai/test" and "local/smollm2-135m" in values
    assert mode.category == "mode" and mode.current_value == "default"
    assert {"default", "plan-implement-review"} <= {o.value for o in mode.options}

    fake.script(text("one"))
    await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("hi")]), WAIT_S)
    assert fake.requests[-1]["model"] == "test"
    changed = await agent.conn.set_config_option(
        config_id="model", session_id=sid, value="openai/other"
    )
    assert options_by_id(changed.config_options)["model"].current_value == "openai/other"
    fake.script(text("two"))
    await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("again")]), WAIT_S)
    assert fake.requests[-1]["model"] == "other"
    assert user_texts(fake.requests[-1])[0] == "hi"  # the same conversation

    with pytest.raises(RequestError, match="unknown configuration option"):
        await agent.conn.set_config_option(config_id="speed", session_id=sid, value="x")
    with pytest.raises(RequestError, match="unknown workflow"):
        await agent.conn.set_config_option(config_id="mode", session_id=sid, value="nosuch")
    modal = await agent.conn.set_config_option(
        config_id="mode", session_id=sid, value="plan-implement-review"
    )
    assert options_by_id(modal.config_options)["mode"].current_value == "plan-implement-review"


async def test_the_chosen_model_holds_after_load_in_a_new_agent(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    first = await start()
    session = await first.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    fake.script(text("one"))
    await asyncio.wait_for(first.conn.prompt(session_id=sid, prompt=[text_block("hi")]), WAIT_S)
    await first.conn.set_config_option(config_id="model", session_id=sid, value="openai/other")

    second = await start()
    loaded = await second.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    assert options_by_id(loaded.config_options)["model"].current_value == "openai/other"
    fake.script(text("two"))
    await asyncio.wait_for(second.conn.prompt(session_id=sid, prompt=[text_block("go")]), WAIT_S)
    assert fake.requests[-1]["model"] == "other"


async def test_slash_commands_are_announced_and_expanded(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    folder = workspace / ".cadenza" / "commands"
    folder.mkdir(parents=True)
    (folder / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: the file\n---\nExplain $ARGUMENTS.\n"
    )
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    commands = {c["name"]: c for c in await commands_of(agent, sid)}
    assert commands["explain"] == {
        "name": "explain",
        "description": "Explain a file",
        "input": {"hint": "the file"},
    }
    assert "plan-implement-review" in commands

    fake.script(text("It adds."))
    await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("/explain app.py")]), WAIT_S
    )
    assert user_texts(fake.requests[-1])[0] == "Explain app.py."


async def test_usage_update_carries_the_session_cost_when_reported(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    from tests.support.fake_openai import Reply

    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    fake.script(Reply(content="one", cost=0.25))
    await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("a")]), WAIT_S)
    fake.script(Reply(content="two", cost=0.5))
    await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("b")]), WAIT_S)
    usages = [u for u in agent.peer.updates(sid) if u["sessionUpdate"] == "usage_update"]
    assert [u["cost"] for u in usages] == [
        {"amount": 0.25, "currency": "USD"},
        {"amount": 0.75, "currency": "USD"},  # cumulative, as ACP says
    ]
    assert usages[-1]["size"] > 0


async def test_the_model_selector_offers_ollamas_models_and_one_runs_the_next_turn(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    with FakeOpenAI(models=["qwen2.5-coder:7b"]) as ollama:
        host = f"127.0.0.1:{ollama.port}"
        agent = await start(extra_env={"OLLAMA_HOST": host})
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        model = options_by_id(session.config_options)["model"]
        offered = {o.value: o.name for o in model.options}
        assert offered["ollama/qwen2.5-coder:7b"] == "qwen2.5-coder:7b (Ollama)"
        described = {o.value: o.description for o in model.options}
        assert described["ollama/qwen2.5-coder:7b"] == f"Ollama at {host}"
        assert "local/qwen2.5-coder-1.5b" in offered

        fake.script(text("one"))
        await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("hi")]), WAIT_S)
        await agent.conn.set_config_option(
            config_id="model", session_id=sid, value="ollama/qwen2.5-coder:7b"
        )
        ollama.script(text("two"))
        await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=[text_block("again")]), WAIT_S
        )
        assert [r["model"] for r in ollama.requests] == ["qwen2.5-coder:7b"]
