"""``_cadenza/restoreTurn`` over a real ``cadenza acp``: the same restore as the LSP face's
``cadenza.restoreTurn`` (files of that turn and the later ones put back, texts through
``fs/write_text_file``, the conversation cut, the person's words given back); refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.acp.conftest import WAIT_S, Agent, Start
from tests.support.fake_openai import FakeOpenAI, Reply, call, person_messages, text

REQUEST_FAILED = -32803
INVALID_PARAMS = -32602
METHOD = "cadenza/restoreTurn"  # sent as _cadenza/restoreTurn


def edit(path: str, old: str, new: str, call_id: str) -> Reply:
    return call("edit_file", {"path": path, "old_string": old, "new_string": new}, call_id)


async def say(agent: Agent, sid: str, words: str) -> str:
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block(words)]), WAIT_S
    )
    return str(response.stop_reason)


async def restore(agent: Agent, params: dict[str, Any]) -> dict[str, Any]:
    return await asyncio.wait_for(agent.conn.ext_method(METHOD, params), WAIT_S)


async def refused(agent: Agent, params: dict[str, Any]) -> RequestError:
    with pytest.raises(RequestError) as caught:
        await restore(agent, params)
    return caught.value


async def test_restore_puts_back_the_files_and_the_next_prompt_goes_on_before_the_turn(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 1\n", encoding="utf-8")
    (workspace / "c.py").write_text("c = 1\n", encoding="utf-8")
    fake.script(
        edit("a.py", "x = 1", "x = 2", "c1"),
        text("x is 2"),
        edit("a.py", "y = 1", "y = 2", "c2"),
        call("create_file", {"path": "b.py", "content": "b = 1\n"}, "c3"),
        text("y is 2, b made"),
        edit("c.py", "c = 1", "c = 2", "c4"),
        text("c is 2"),
    )
    agent = await start()
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    assert await say(agent, sid, "set x to 2") == "end_turn"
    assert await say(agent, sid, "now y, and a b.py") == "end_turn"
    assert await say(agent, sid, "and c") == "end_turn"
    assert (workspace / "b.py").exists()
    agent.peer.writes.clear()

    result = await restore(agent, {"sessionId": sid, "turn": 2})

    assert (result["sessionId"], result["turn"], result["text"]) == (sid, 2, "now y, and a b.py")
    assert sorted((f["path"], f["action"]) for f in result["files"]) == [
        ("a.py", "restored"),
        ("b.py", "removed"),
        ("c.py", "restored"),
    ]
    assert result["skipped"] == []
    assert (workspace / "a.py").read_text() == "x = 2\ny = 1\n"
    assert not (workspace / "b.py").exists()
    assert (workspace / "c.py").read_text() == "c = 1\n"
    # Texts went through the client, as the session's own edits do.
    assert sorted(Path(path).name for path, _ in agent.peer.writes) == ["a.py", "c.py"]

    fake.script(text("only y then"))
    assert await say(agent, sid, "only y") == "end_turn"
    texts = person_messages(fake.requests[-1])
    assert texts[0] == "set x to 2" and texts[-1] == "only y"
    assert not any("now y" in t or "and c" in t for t in texts)
    assert not any(
        m.get("content") in ("y is 2, b made", "c is 2") for m in fake.requests[-1]["messages"]
    )


async def test_a_running_session_a_missing_turn_and_bad_params_are_refused(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(text("one"), Reply(content="slow", delay_s=30))
    agent = await start()
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    assert await say(agent, sid, "first") == "end_turn"
    slow = asyncio.create_task(say(agent, sid, "second"))
    while len(fake.requests) < 2:
        await asyncio.sleep(0.02)

    running = await refused(agent, {"sessionId": sid, "turn": 1})
    assert running.code == REQUEST_FAILED
    assert str(running) == (
        f"session {sid} is running: wait for its turn to end, or cancel it, before restoring it"
    )
    await agent.conn.cancel(session_id=sid)
    assert await asyncio.wait_for(slow, WAIT_S) == "cancelled"

    missing = await refused(agent, {"sessionId": sid, "turn": 3})
    assert missing.code == REQUEST_FAILED
    assert str(missing) == f"session {sid} has no turn 3: its turns are 1 to 2"
    unknown = await refused(agent, {"sessionId": "f" * 32, "turn": 1})
    assert unknown.code == REQUEST_FAILED and "load it first" in str(unknown)
    bad = await refused(agent, {"sessionId": sid, "turn": 0})
    assert bad.code == INVALID_PARAMS and "turn" in str(bad)
