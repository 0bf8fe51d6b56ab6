"""Issue 16 regressions through a real ``cadenza acp`` process: message order, undo after a crash.

- Defect 4: a request the agent makes on behalf of a tool call (``fs/read_text_file``,
  ``fs/write_text_file``, ``session/request_permission``, ``terminal/*``) reached the client
  before the ``tool_call`` update announcing the call. The client must always learn of a call
  first.
- Defect 5: the ACP face never recorded the pending state of an edit, so when the agent died
  after the client applied an edit but before it recorded the edit, ``cadenza undo`` said "the
  session changed no file" and left the change; the LSP face undoes it. Both now go through
  one checkpointed edit path.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import WriteTextFileResponse

from tests.acp.conftest import WAIT_S, Peer, Start, agent_env
from tests.support.fake_openai import FakeOpenAI, call, text

ON_BEHALF = (
    "fs/read_text_file",
    "fs/write_text_file",
    "session/request_permission",
    "terminal/create",
    "terminal/wait_for_exit",
    "terminal/output",
    "terminal/release",
)


def _announced_before(wire: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """Each request on a call's behalf, with the call last announced before it (None: none)."""
    announced: str | None = None
    seen: list[tuple[str, str | None]] = []
    for message in wire:
        if message["dir"] != "in" or "method" not in message:
            continue
        method = message["method"]
        if method == "session/update":
            update = message["params"]["update"]
            if update["sessionUpdate"] == "tool_call":
                announced = update["toolCallId"]
        elif method in ON_BEHALF:
            seen.append((method, announced))
    return seen


async def test_every_request_for_a_call_follows_its_tool_call(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.py"}, "c1"),
        call("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}, "c2"),
        call("run_command", {"command": "echo hi"}, "c3"),
        text("done"),
    )
    agent = await start(terminal=True)
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("go")]), WAIT_S
    )
    assert response.stop_reason == "end_turn"
    seen = _announced_before(agent.peer.wire)
    methods = [method for method, _ in seen]
    assert "fs/write_text_file" in methods and "terminal/create" in methods, seen
    expected = {
        "fs/read_text_file": {"c1", "c2"},  # the read, then the edit's look at the buffer
        "fs/write_text_file": {"c2"},
        "session/request_permission": {"c3"},
    }
    for method, announced in seen:
        assert announced in expected.get(method, {"c3"}), (method, announced, seen)
    # ...and in call order: c1's read before c2's requests, c2's before c3's.
    order = [announced for _, announced in seen]
    assert order == sorted(order, key=str), seen


@dataclass
class DyingEditor(Peer):
    """An editor that applies the write, then never answers (the agent dies meanwhile)."""

    written: asyncio.Event = field(default_factory=asyncio.Event)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        Path(path).write_text(content, encoding="utf-8")
        self.written.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_undo_after_the_agent_died_mid_edit(
    start: Start, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n", encoding="utf-8")
    fake.script(
        call("read_file", {"path": "a.py"}, "c1"),
        call("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}, "c2"),
        text("done"),
    )
    peer = DyingEditor()
    agent = await start(peer=peer)
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    prompt = asyncio.create_task(
        agent.conn.prompt(session_id=session.session_id, prompt=[text_block("x to 2")])
    )
    await asyncio.wait_for(peer.written.wait(), WAIT_S)
    agent.process.kill()  # the crash: the edit is applied, its after-state never recorded
    await asyncio.wait_for(agent.process.wait(), WAIT_S)
    prompt.cancel()
    await asyncio.gather(prompt, return_exceptions=True)
    assert (workspace / "a.py").read_text(encoding="utf-8") == "x = 2\n"

    undo = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cadenza",
        "undo",
        session.session_id,
        "--workspace",
        str(workspace),
        env=agent_env(fake.base_url, workspace.parent / "home"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(undo.communicate(), WAIT_S)
    assert undo.returncode == 0, output.decode()
    assert "restored a.py" in output.decode(), output.decode()
    assert (workspace / "a.py").read_text(encoding="utf-8") == "x = 1\n"
