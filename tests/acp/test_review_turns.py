"""Each ACP ``session/prompt`` is a new turn for the per-hunk review (``host.turn_changes``):
the review lists that turn's changes only, as after ``cadenza.promptSession`` on the LSP face."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block

from cadenza.host.checkpoints import SessionCheckpoint, disk_state
from cadenza.host.turn_changes import turn_files
from tests.acp.conftest import WAIT_S, Start
from tests.support.fake_openai import FakeOpenAI, call, text


def edit_call(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


def reviewed(session_id: str, home: Path) -> dict[str, list[tuple[str, str]]]:
    """What the review of the session's latest turn lists: path → (old, new) per hunk."""
    base = home / "xdg_state_home" / "cadenza" / "checkpoints"
    checkpoint = SessionCheckpoint.load(session_id, base)
    assert checkpoint is not None, f"no checkpoint in {base}"
    files = turn_files(checkpoint, lambda rel: disk_state(checkpoint.absolute(rel)))
    return {f.path: [(h.old_text, h.new_text) for h in f.hunks] for f in files}


async def test_each_prompt_starts_a_new_review_turn(
    start: Start, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    (workspace / "b.py").write_text("z = 3\n", encoding="utf-8")
    fake.script(
        call("edit_file", edit_call("a.py", "y = 2", "y = 20"), "c1"),
        text("Changed a.py."),
        call("edit_file", edit_call("b.py", "z = 3", "z = 30"), "c2"),
        call("edit_file", edit_call("a.py", "x = 1", "x = 10"), "c3"),
        text("Changed b.py and a.py again."),
        text("Nothing to change."),
    )
    agent = await start()
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    home = tmp_path / "home"

    first = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("set y to 20")]), WAIT_S
    )
    assert first.stop_reason == "end_turn"
    assert reviewed(sid, home) == {"a.py": [("y = 2\n", "y = 20\n")]}

    second = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("now z and x")]), WAIT_S
    )
    assert second.stop_reason == "end_turn"
    # Turn 2's changes only: a.py's hunk from turn 1 is not listed again.
    assert reviewed(sid, home) == {
        "a.py": [("x = 1\n", "x = 10\n")],
        "b.py": [("z = 3\n", "z = 30\n")],
    }

    third = await asyncio.wait_for(
        agent.conn.prompt(session_id=sid, prompt=[text_block("anything else?")]), WAIT_S
    )
    assert third.stop_reason == "end_turn"
    assert reviewed(sid, home) == {}  # a turn without changes has nothing to review
    # The model was told nothing was undone (no note before the prompts).
    assert fake.requests[-1]["messages"][-1]["content"] == "anything else?"
    # The whole-session undo still knows every file's first state.
    checkpoint = SessionCheckpoint.load(sid, home / "xdg_state_home" / "cadenza" / "checkpoints")
    assert checkpoint is not None
    assert sorted(checkpoint.entries) == ["a.py", "b.py"]
