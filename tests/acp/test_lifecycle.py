"""One session lifecycle on both faces: an ACP turn holds the session, the session is free between.

Each prompt turn is a task of the session service that holds the session's lock; when the turn
ends the lock is released, so another process (another server, ``cadenza undo``) may take the
session before the next prompt, which revives it from its transcript.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import RequestError, text_block

from cadenza.host.lock import SessionLock, SessionLocked
from tests.acp.conftest import WAIT_S, Start, agent_env
from tests.acp.test_acp import edit_call, wait_for_requests
from tests.support.fake_openai import FakeOpenAI, Reply, call, text

REQUEST_FAILED = -32803


async def test_a_turn_holds_the_session_and_between_prompts_another_may_take_it(
    start: Start, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n", encoding="utf-8")
    fake.script(
        call("edit_file", edit_call("a.py", "x = 1", "x = 2"), "c1"),
        Reply(content="x is 2", delay_s=1.0),
    )
    agent = await start()
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    sessions = tmp_path / "home" / "xdg_state_home" / "cadenza" / "sessions"

    first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("x to 2")]))
    await wait_for_requests(fake, 2)  # the turn waits for the model's second answer
    with pytest.raises(SessionLocked):
        SessionLock.acquire(sid, sessions)
    assert (await asyncio.wait_for(first, WAIT_S)).stop_reason == "end_turn"

    # Between prompts another process may take the session; the agent's prompt is refused
    # meanwhile, and nothing is lost.
    taken = SessionLock.acquire(sid, sessions)
    try:
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(
                agent.conn.prompt(session_id=sid, prompt=[text_block("and now?")]), WAIT_S
            )
    finally:
        taken.release()
    assert refused.value.code == REQUEST_FAILED
    assert "another Cadenza server" in str(refused.value)
    assert len(fake.requests) == 2

    undo = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cadenza",
        "undo",
        sid,
        "--workspace",
        str(workspace),
        env=agent_env(fake.base_url, tmp_path / "home"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(undo.communicate(), WAIT_S)
    assert undo.returncode == 0, output.decode()
    assert (workspace / "a.py").read_text(encoding="utf-8") == "x = 1\n"

    # The next prompt takes the session up again from its transcript, in the same conversation.
    fake.script(text("x is 1 again"))
    again = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("and now?")]), WAIT_S
    )
    assert again.stop_reason == "end_turn"
    contents = [m.get("content") or "" for m in fake.requests[-1]["messages"]]
    assert "x to 2" in contents
    assert "x is 2" in contents
    assert contents[-1].endswith("and now?")
    SessionLock.acquire(sid, sessions).release()  # free again once the turn ended


async def test_two_prompts_at_once_run_one_after_the_other_in_one_conversation(
    start: Start, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    fake.script(Reply(content="first answer", delay_s=1.0), text("second answer"))
    agent = await start()
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("one")]))
    second = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("two")]))
    done = await asyncio.wait_for(asyncio.gather(first, second), WAIT_S)
    assert [r.stop_reason for r in done] == ["end_turn", "end_turn"]
    peer = agent.peer
    first_done = peer.response_index(peer.request_id("session/prompt", 0))
    second_done = peer.response_index(peer.request_id("session/prompt", 1))
    assert first_done < second_done
    # The second turn began after the first ended, and went on in its conversation.
    assert len(fake.requests) == 2
    contents = [m.get("content") or "" for m in fake.requests[1]["messages"]]
    assert "one" in contents and "first answer" in contents
    assert contents[-1].endswith("two")
    sessions = tmp_path / "home" / "xdg_state_home" / "cadenza" / "sessions"
    SessionLock.acquire(sid, sessions).release()  # free once both turns ended
