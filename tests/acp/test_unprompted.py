"""A session created and never prompted is loaded by the next agent process (acpx's flow).

Real ``cadenza acp`` processes one after the other, sharing the user's state folder: the
first creates a session (and picks a mode) and exits; the second loads it (nothing to replay)
and prompts it; the third loads the stored transcript of that prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.conftest import agent_env
from tests.reliability.rawacp import RawAcp
from tests.support.fake_openai import FakeOpenAI, text

WAIT_S = 120.0


def _agent(tmp_path: Path, base_url: str, workspace: Path) -> RawAcp:
    agent = RawAcp(agent_env(base_url, tmp_path / "home"), cwd=workspace)
    init = agent.request(0, "initialize", {"protocolVersion": 1}, WAIT_S)
    assert init is not None and "result" in init, init
    return agent


def _ask(agent: RawAcp, msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer = agent.request(msg_id, method, params, WAIT_S)
    assert answer is not None, f"{method}: no answer"
    return answer  # type: ignore[no-any-return]


def test_an_unprompted_session_survives_a_restart(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    with FakeOpenAI([text("hello")]) as fake:
        first = _agent(tmp_path, fake.base_url, workspace)
        created = _ask(first, 1, "session/new", {"cwd": str(workspace), "mcpServers": []})
        session = created["result"]["sessionId"]
        mode = {"sessionId": session, "modeId": "plan-implement-review"}
        assert "result" in _ask(first, 2, "session/set_mode", mode)
        assert first.stop() == 0

        second = _agent(tmp_path, fake.base_url, workspace)
        load = {"sessionId": session, "mcpServers": []}
        wrong = _ask(second, 1, "session/load", {**load, "cwd": str(other)})
        assert "belongs to the workspace" in wrong["error"]["message"], wrong
        loaded = _ask(second, 2, "session/load", {**load, "cwd": str(workspace)})
        assert loaded["result"]["modes"]["currentModeId"] == "plan-implement-review", loaded
        # Nothing to replay; only the slash-command list, sent once the session is answered.
        updates = [
            n["params"]["update"]["sessionUpdate"]
            for n in second.notifications
            if n.get("method") == "session/update"
        ]
        assert set(updates) <= {"available_commands_update"}, updates
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        done = _ask(second, 3, "session/prompt", prompt)
        assert done["result"]["stopReason"] == "end_turn", done
        assert second.stop() == 0

        third = _agent(tmp_path, fake.base_url, workspace)
        replayed = _ask(third, 1, "session/load", {**load, "cwd": str(workspace)})
        assert "result" in replayed, replayed
        texts = [
            n["params"]["update"].get("content", {}).get("text")
            for n in third.notifications
            if n.get("method") == "session/update"
        ]
        assert "hi" in texts and "hello" in texts, texts
        assert third.stop() == 0
    state = tmp_path / "home" / "xdg_state_home"
    assert not list(state.rglob("*.unprompted.json")), "the record outlived the first prompt"
    assert list(state.rglob(f"{session}.jsonl"))
