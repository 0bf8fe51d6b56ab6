"""On the LSP face the client learns of a call before any request for it.

``workspace/applyEdit`` and ``cadenza/requestPermission`` made on behalf of a tool call reach
the client after the ``cadenza/sessionUpdate`` ``tool_call`` that announces the call (the
publisher writes each notification at once, in order, before the tool runs).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from tests.lsp.conftest import Connect
from tests.lsp.harness import WAIT_S, Harness, capabilities
from tests.support.fake_openai import FakeOpenAI, call, text


def _announced(editor: Harness) -> list[str]:
    return [
        update["toolCallId"]
        for updates in editor.updates.values()
        for update in updates
        if update["sessionUpdate"] == "tool_call"
    ]


async def test_edit_and_permission_requests_follow_their_tool_call(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.py"}, "c1"),
        call("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}, "c2"),
        call("run_command", {"command": "echo hi"}, "c3"),
        text("done"),
    )
    editor = await connect(caps=capabilities(request_permission=True))
    seen_at_edit: list[list[str]] = []
    apply_edit = editor._on_apply_edit

    def on_apply_edit(params: Any) -> Any:
        seen_at_edit.append(_announced(editor))
        return apply_edit(params)

    editor._on_apply_edit = on_apply_edit  # type: ignore[method-assign]
    gate = editor.permission_gate = asyncio.Event()
    session_id = await editor.start("go")
    deadline = time.monotonic() + WAIT_S
    while not editor.permission_requests:
        assert time.monotonic() < deadline, "no permission request"
        await asyncio.sleep(0.02)
    assert _announced(editor)[-1] == "c3"  # announced before the question arrived
    gate.set()
    end = await editor.wait_end(session_id)
    assert end["stopReason"] == "end_turn"
    assert seen_at_edit == [["c1", "c2"]]
