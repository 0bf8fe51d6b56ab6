"""The done check ``tests`` over ACP: the test run goes through the client's terminal and
``session/request_permission``, and failures go back to the model."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from acp import text_block

from tests.acp.conftest import WAIT_S, Start
from tests.support.fake_openai import FakeOpenAI, call, tool_messages

SCRIPT = f"{sys.executable} -S test_calc.py"
WRONG = {"path": "calc.py", "old_string": "return x", "new_string": "return x + 1"}
FIX = {"path": "calc.py", "old_string": "return x + 1", "new_string": "return 2 * x"}
DONE = {"status": "done", "summary": "double fixed"}


def project(root: Path, config_home: Path) -> None:
    (root / "calc.py").write_text("def double(x):\n    return x\n")
    (root / "test_calc.py").write_text(
        "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6, double(3)\n"
        "\n\nif __name__ == '__main__':\n    test_double()\n    print('1 passed')\n"
    )
    (config_home / "cadenza").mkdir(parents=True, exist_ok=True)
    (config_home / "cadenza" / "cadenza.toml").write_text(
        f'[loop]\nchecks = "all"\n\n[checks]\ntest = "{SCRIPT}"\n'
    )


async def test_tests_run_in_the_client_terminal_and_refuse_then_accept(
    start: Start, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    project(workspace, tmp_path / "home" / "xdg_config_home")
    fake.script(
        call("edit_file", WRONG, "e1"),
        call("complete", DONE, "d1"),
        call("edit_file", FIX, "e2"),
        call("complete", DONE, "d2"),
    )
    agent = await start(terminal=True)
    peer = agent.peer
    sid = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("fix double")]), WAIT_S * 4
    )
    assert response.stop_reason == "end_turn"
    created = [p for method, p in peer.terminal_calls if method == "create"]
    assert [p["args"] for p in created] == [["-c", SCRIPT], ["-c", SCRIPT]]
    # Asked once: allowed, the test command runs again in the session without asking.
    asked = [tool_call.tool_call_id for tool_call, _ in peer.permissions]
    assert asked == ["check-tests"]
    [refusal] = [m for m in tool_messages(fake.requests[2]) if m["tool_call_id"] == "d1"]
    assert "the tests fail" in refusal["content"] and "AssertionError: 4" in refusal["content"]
    thoughts = [
        u["content"]["text"]
        for u in peer.updates(sid)
        if u["sessionUpdate"] == "agent_thought_chunk"
    ]
    assert any(t.startswith("Check tests failed: the tests fail") for t in thoughts)
    assert any(t.startswith("Check tests passed") for t in thoughts)
    run = [u for u in peer.updates(sid) if u.get("toolCallId") == "check-tests"]
    assert run[0]["sessionUpdate"] == "tool_call" and run[-1]["status"] == "failed"

    # The answer holds for the session: the next prompt's done check runs the tests unasked.
    fake.script(
        call("edit_file", {"path": "calc.py", "old_string": "2 * x", "new_string": "x * 2"}, "e3"),
        call("complete", DONE, "d3"),
    )
    again = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("write it x * 2")]), WAIT_S * 4
    )
    assert again.stop_reason == "end_turn"
    assert len([p for method, p in peer.terminal_calls if method == "create"]) == 3
    assert [tool_call.tool_call_id for tool_call, _ in peer.permissions] == ["check-tests"]
    # Its test run is a call of its own: a revived turn never takes an id used before.
    started = [u["toolCallId"] for u in peer.updates(sid) if u["sessionUpdate"] == "tool_call"]
    assert len(started) == len(set(started)), started
    assert started[-1] == "check-tests-3"
