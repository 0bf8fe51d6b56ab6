"""An editor without a language server for a file type: the server's own one answers instead.

The raw LSP client declares every code-intelligence feature but, like VS Code without a Python
extension, has no language server for ``.py``: it answers ``cadenza/references``,
``cadenza/definition`` and ``cadenza/rename`` with the ``-32601`` "not available" error and
lists the files in ``cadenza/diagnostics``' ``unavailable``. The real server then asks the
Python language server it starts itself (real ``ty``); the rename still goes through the
editor's ``workspace/applyEdit``. A file type no one serves is an error the model reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from cadenza.intel.servers import find_servers
from cadenza.schema.intel import NOT_AVAILABLE
from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, file_uri
from tests.lsp.test_editor_intel import intel_caps, results
from tests.support.fake_openai import FakeOpenAI, call, text

INVENTORY = "def calc_total(items):\n    return sum(items)\n"
REPORT = "from inventory import calc_total\n\n\ndef main():\n    print(calc_total([1, 2]))\n"

pytestmark = pytest.mark.skipif(
    "python" not in find_servers(), reason="no Python language server installed"
)


def no_server_for(editor: Harness, suffixes: set[str], asked: list[tuple[str, Any]]) -> None:
    """Answer every request with "not available" for files ending in ``suffixes``."""

    def symbol(method: str) -> Any:
        def handler(params: dict[str, Any]) -> Any:
            asked.append((method, params["textDocument"]["uri"]))
            if Path(params["textDocument"]["uri"]).suffix in suffixes:
                raise JsonRpcException(code=NOT_AVAILABLE, message="no language server for it")
            return []

        return handler

    def diagnostics(params: dict[str, Any]) -> dict[str, Any]:
        uris = params.get("uris") or []
        asked.append(("diagnostics", uris))
        missing = [u for u in uris if Path(u).suffix in suffixes]
        items = [{"uri": u, "diagnostics": []} for u in uris if u not in missing]
        return {"items": items, "unavailable": missing}

    for method in ("references", "definition", "rename"):
        editor.client.feature(f"cadenza/{method}")(symbol(method))
    editor.client.feature("cadenza/diagnostics")(diagnostics)


async def test_the_servers_own_language_server_answers_for_a_file_the_editor_cannot(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "inventory.py").write_text(INVENTORY)
    (workspace / "report.py").write_text(REPORT)
    editor = await connect(caps=intel_caps("utf-16"))
    asked: list[tuple[str, Any]] = []
    no_server_for(editor, {".py"}, asked)
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
        text("Renamed."),
    )
    _, end = await editor.run("rename calc_total to compute_total")

    assert end["stopReason"] == "end_turn"
    found = results(fake)
    # The editor was asked first, every time; ty answered.
    methods = {method for method, _ in asked}
    assert {"references", "definition", "rename", "diagnostics"} <= methods, asked
    assert found["f1"].startswith("3 place(s) use `calc_total`:"), found["f1"]
    for where in ("inventory.py:1", "report.py:1", "report.py:5"):
        assert where in found["f1"], found["f1"]
    assert "inventory.py:1" in found["g1"], found["g1"]
    assert found["r1"].startswith("renamed `calc_total` to `compute_total` in 2 file(s)")
    # The rename went through the editor's workspace/applyEdit like any edit.
    assert editor.text_of(workspace / "report.py") == REPORT.replace("calc_total", "compute_total")
    # The edit's result carries ty's new error; so does the diagnostics tool.
    assert "New errors after this edit" in found["e1"] and "itemz" in found["e1"], found["e1"]
    assert "inventory.py:2: error:" in found["d1"] and "itemz" in found["d1"], found["d1"]
    assert ("diagnostics", [file_uri(workspace / "inventory.py")]) in asked


async def test_a_file_no_language_server_serves_is_an_error_the_model_reads(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "inventory.py").write_text(INVENTORY)
    (workspace / "shop.rb").write_text("def total(items)\n  items.sum\nend\n")
    editor = await connect(caps=intel_caps("utf-16"))
    asked: list[tuple[str, Any]] = []
    no_server_for(editor, {".py", ".rb"}, asked)
    fake.script(
        call("find_references", {"path": "shop.rb", "line": 1, "symbol": "total"}, "f1"),
        call("diagnostics", {"path": "shop.rb"}, "d1"),
        text("No language server."),
    )
    _, end = await editor.run("find the uses of total")

    assert end["stopReason"] == "end_turn"  # the session went on
    found = results(fake)
    for call_id in ("f1", "d1"):
        assert found[call_id] == (
            "no language server is available for shop.rb; use search and read_file instead"
        ), found[call_id]
    assert ("references", file_uri(workspace / "shop.rb")) in asked  # the editor was asked
