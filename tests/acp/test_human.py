"""``waiting_human`` over ACP with real headless Chromium: the login page makes the turn ask
the person (URL elicitation, or the Continue/Cancel permission fallback); the test plays the
person over CDP; on continue the same turn resumes the same browser session, logged in."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import text_block

from tests.acp.conftest import WAIT_S, Peer, Start
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages
from tests.support.web import SECRET, TestSite
from tests.tools.test_browse_interactive import free_port, log_in_as_the_person, needs_chromium


@pytest.fixture
def site() -> Iterator[TestSite]:
    with TestSite() as served:
        yield served


def headless_browser(home: Path) -> int:
    """Write the user config of the agents started by ``start``: headless, a CDP port."""
    port = free_port()
    folder = home / "xdg_config_home" / "cadenza"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cadenza.toml").write_text(
        f"[browser]\nheadless = true\nremote_debugging_port = {port}\n", encoding="utf-8"
    )
    return port


@needs_chromium
@pytest.mark.parametrize("elicitation", [True, False], ids=["elicitation", "permission"])
async def test_login_page_asks_the_person_then_the_turn_goes_on_logged_in(
    start: Start,
    fake: FakeOpenAI,
    site: TestSite,
    workspace: Path,
    tmp_path: Path,
    elicitation: bool,
) -> None:
    port = headless_browser(tmp_path / "home")
    account = site.url("/account")
    fake.script(
        call("browse_interactive", {"action": "open", "url": account}, "c1"),
        call("browse_interactive", {"action": "read"}, "c2"),
        text("You are logged in; the secret is on the page."),
    )
    peer = Peer(human_gate=asyncio.Event())
    agent = await start(elicitation=elicitation, peer=peer)
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    turn = asyncio.create_task(
        agent.conn.prompt(session_id=sid, prompt=[text_block("read my account page")])
    )
    await asyncio.wait_for(peer.human_asked.wait(), WAIT_S)
    if elicitation:
        [(message, mode)] = peer.elicitations
        assert "password" in message
        url = str(mode.url)
        assert url.startswith(f"http://127.0.0.1:{port}/devtools/inspector.html?ws=")  # act_url
        assert mode.session_id == sid and mode.tool_call_id == "c1"
    else:
        tool_call, options = peer.permissions[-1]
        assert [(o.option_id, o.kind, o.name) for o in options] == [
            ("continue", "allow_once", "Continue when done"),
            ("cancel", "reject_once", "Cancel"),
        ]
        assert tool_call.tool_call_id == "c1"
        said = [
            u["content"]["text"]
            for u in peer.updates(sid)
            if "content" in u and u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert "password" in said[-1] and f"http://127.0.0.1:{port}/devtools/" in said[-1]
    assert not turn.done()

    await log_in_as_the_person(port, account, "ada")  # the person, in the same browser
    peer.human_gate.set()  # type: ignore[union-attr]
    response = await asyncio.wait_for(turn, WAIT_S)
    assert response.stop_reason == "end_turn"
    read = list(tool_messages(fake.requests[2]))[-1]
    assert "Welcome, ada" in read["content"]
    assert SECRET in read["content"]
    messages = [
        u["content"]["text"]
        for u in peer.updates(sid)
        if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert messages[-1] == "You are logged in; the secret is on the page."
    calls = [u["toolCallId"] for u in peer.updates(sid) if u["sessionUpdate"] == "tool_call"]
    assert calls == ["c1", "c2"]


@needs_chromium
async def test_cancel_ends_the_prompt_cancelled_and_the_session_goes_on(
    start: Start, fake: FakeOpenAI, site: TestSite, workspace: Path, tmp_path: Path
) -> None:
    headless_browser(tmp_path / "home")
    fake.script(
        call("browse_interactive", {"action": "open", "url": site.url("/account")}, "c1"),
        text("Fine, I stopped."),
    )
    peer = Peer(human_answer="cancel")
    agent = await start(elicitation=True, peer=peer)
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("read my account page")]), WAIT_S
    )
    assert response.stop_reason == "cancelled"
    assert len(peer.elicitations) == 1
    assert len(fake.requests) == 1
    again = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("never mind")]), WAIT_S
    )
    assert again.stop_reason == "end_turn"
    assert len(fake.requests) == 2
