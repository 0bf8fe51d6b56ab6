"""Calls that cannot be carried out are refused before the person or the editor is involved.

- A command whose ``cwd`` is outside the workspace can never run: the person is not asked
  to allow it (the refusal would come only after their "allow").
- ``read_file`` of a FIFO is never sent to the client as ``fs/read_text_file``: an editor
  that simply opens the path would hang on it.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ReadTextFileResponse

from tests.acp.conftest import WAIT_S, Peer, Start
from tests.support.fake_openai import FakeOpenAI, call, text


def _tool_results(fake: FakeOpenAI) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"]
        for m in fake.requests[-1]["messages"]
        if m["role"] == "tool"
    }


async def _turn(agent: Any, workspace: Path) -> str:
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("go")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    return str(session.session_id)


@pytest.mark.parametrize("where", ["relative", "absolute"])
async def test_a_command_outside_the_workspace_is_not_put_to_the_person(
    start: Start, fake: FakeOpenAI, workspace: Path, where: str
) -> None:
    outside = workspace.parent / "outside"
    outside.mkdir()
    cwd = "../outside" if where == "relative" else str(outside)
    fake.script(
        call("run_command", {"command": "echo hi > out.txt", "cwd": cwd}, "c1"),
        text("finished"),
    )
    agent = await start(answer="allow_once")
    sid = await _turn(agent, workspace)
    assert agent.peer.permissions == []
    assert not (outside / "out.txt").exists()
    assert f"path {cwd!r} is outside the workspace" in _tool_results(fake)["c1"]
    [finished] = [
        u
        for u in agent.peer.updates(sid)
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed"
    ]
    assert finished["toolCallId"] == "c1"


async def test_a_delete_that_cannot_be_made_is_not_put_to_the_person(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "folder").mkdir()
    fake.script(
        call("delete_file", {"path": "missing.py"}, "c1"),
        call("delete_file", {"path": "folder"}, "c2"),
        text("finished"),
    )
    agent = await start(answer="allow_once")
    await _turn(agent, workspace)
    assert agent.peer.permissions == []
    results = _tool_results(fake)
    assert results["c1"] == "file not found: missing.py"
    assert results["c2"] == "folder is a folder; only files can be deleted or renamed"
    assert (workspace / "folder").is_dir()


@dataclass
class CarefulEditor(Peer):
    """An editor that reads only regular files (a FIFO would hang the test's own loop)."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        if os.path.exists(path) and not os.path.isfile(path):
            self.reads.append(path)
            raise RequestError.invalid_params({"path": path, "reason": "not a regular file"})
        return await super().read_text_file(session_id, path, line, limit, **kwargs)


async def test_read_file_of_a_fifo_is_not_sent_to_the_editor(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "a.txt").write_text("on disk\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "pipe"}, "c1"),
        call("read_file", {"path": "a.txt"}, "c2"),
        text("done"),
    )
    peer = CarefulEditor(buffers={str(workspace / "a.txt"): "in the buffer\n"})
    agent = await start(peer=peer)
    await _turn(agent, workspace)
    assert peer.reads == [str(workspace / "a.txt")]  # the regular file still goes to the editor
    results = _tool_results(fake)
    assert results["c1"] == "pipe is not a regular file (it is a FIFO); it was not read"
    assert "in the buffer" in results["c2"]
