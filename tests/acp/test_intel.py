"""The code-intelligence tools over ACP: ``cadenza acp`` with a real language server.

The client (the SDK's client side) offers no language intelligence, so the agent starts the
Python language server itself. The scripted model renames a function (both files are written
through the client's ``fs/write_text_file``), lists its references and the diagnostics, and
the turn ends normally; a symbol named on the wrong line is an error result the turn survives.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from cadenza.intel.servers import find_servers
from tests.acp.conftest import Start
from tests.support.fake_openai import FakeOpenAI, call, text

INVENTORY = "def calc_total(items):\n    return sum(items)\n"
REPORT = "from inventory import calc_total\n\nprint(calc_total([1, 2]))\n"
TURN_S = 120.0

pytestmark = pytest.mark.skipif(
    "python" not in find_servers(), reason="no Python language server installed"
)


def results(updates: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Each call's final status and result text."""
    out = {}
    for u in updates:
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed"):
            texts = [c["content"]["text"] for c in u.get("content") or [] if c["type"] == "content"]
            out[u["toolCallId"]] = (u["status"], "\n".join(texts))
    return out


async def test_rename_references_and_diagnostics_through_acp(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "inventory.py").write_text(INVENTORY)
    (workspace / "report.py").write_text(REPORT)
    fake.script(
        call("find_references", {"path": "report.py", "line": 2, "symbol": "calc_total"}, "c1"),
        call(
            "rename_symbol",
            {"path": "report.py", "line": 3, "symbol": "calc_total", "new_name": "compute_total"},
            "c2",
        ),
        call(
            "find_references", {"path": "inventory.py", "line": 1, "symbol": "compute_total"}, "c3"
        ),
        call("diagnostics", {"path": "report.py"}, "c4"),
        text("Renamed calc_total to compute_total."),
    )
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("rename calc_total")]), TURN_S
    )
    assert response.stop_reason == "end_turn"
    root = workspace.resolve()
    written = dict(agent.peer.writes)
    assert written == {
        str(root / "inventory.py"): INVENTORY.replace("calc_total", "compute_total"),
        str(root / "report.py"): REPORT.replace("calc_total", "compute_total"),
    }
    assert (workspace / "report.py").read_text() == REPORT.replace("calc_total", "compute_total")
    got = results(agent.peer.updates(sid))
    assert got["c1"][0] == "failed" and "it occurs on line(s) 1, 3" in got["c1"][1]
    assert got["c2"][0] == "completed"
    assert got["c2"][1].startswith("renamed `calc_total` to `compute_total` in 2 file(s):")
    assert got["c3"] == (
        "completed",
        "3 place(s) use `compute_total`:\n"
        "inventory.py:1: def compute_total(items):\n"
        "report.py:1: from inventory import compute_total\n"
        "report.py:3: print(compute_total([1, 2]))",
    )
    assert got["c4"] == ("completed", "no problems reported in report.py")
    starts = {
        u["toolCallId"]: u["kind"]
        for u in agent.peer.updates(sid)
        if u["sessionUpdate"] == "tool_call"
    }
    assert starts == {"c1": "search", "c2": "edit", "c3": "search", "c4": "read"}
