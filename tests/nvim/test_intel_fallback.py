"""Headless Neovim with no language server for Python: the server's own ``ty`` answers.

The plugin declares code intelligence, but no LSP client other than Cadenza's is attached to
the ``.py`` buffers, so it answers the server's ``cadenza/*`` requests "not available"
(``-32601``; diagnostics: ``unavailable``) and the real server falls back to the language
server it starts itself. The scripted model's tool calls all get real answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cadenza.intel.servers import find_servers
from tests.nvim.harness import run_scenario
from tests.nvim.test_nvim import passed
from tests.support.fake_openai import (
    FakeOpenAI,
    assert_tool_calls_answered,
    call,
    text,
    tool_messages,
)

INVENTORY = "def calc_total(items):\n    return sum(items)\n"
REPORT = "from inventory import calc_total\n\n\ndef main():\n    print(calc_total([1, 2]))\n"

pytestmark = pytest.mark.skipif(
    "python" not in find_servers(), reason="no Python language server installed"
)


def test_a_buffer_without_a_language_server_is_served_by_cadenzas_own(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "inventory.py").write_text(INVENTORY)
    (workspace / "report.py").write_text(REPORT)
    at_call = {"path": "report.py", "line": 5, "symbol": "calc_total"}
    fake.script(
        call("find_references", at_call, "f1"),
        call("go_to_definition", at_call, "g1"),
        call("rename_symbol", {**at_call, "new_name": "compute_total"}, "r1"),
        call(
            "edit_file",
            {
                "path": "inventory.py",
                "old_string": "return sum(items)",
                "new_string": "return sum(itemz)",
            },
            "e1",
        ),
        call("diagnostics", {"path": "inventory.py"}, "d1"),
        text("Renamed calc_total to compute_total."),
    )
    passed(run_scenario("code_intel_fallback", workspace=workspace, env=env, timeout=180))

    found = {m["tool_call_id"]: str(m["content"]) for r in fake.requests for m in tool_messages(r)}
    assert found["f1"].startswith("3 place(s) use `calc_total`:"), found["f1"]
    for where in ("inventory.py:1", "report.py:1", "report.py:5"):
        assert where in found["f1"], found["f1"]
    assert "inventory.py:1" in found["g1"], found["g1"]
    assert found["r1"].startswith("renamed `calc_total` to `compute_total` in 2 file(s)")
    assert "New errors after this edit" in found["e1"] and "itemz" in found["e1"], found["e1"]
    assert "inventory.py:2: error:" in found["d1"] and "itemz" in found["d1"], found["d1"]
    assert (workspace / "report.py").read_text() == REPORT.replace("calc_total", "compute_total")
    assert "compute_total" in (workspace / "inventory.py").read_text()
    assert_tool_calls_answered(fake.requests[-1])
