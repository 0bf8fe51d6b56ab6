"""Each session writes a JSONL transcript in the platform state dir; failing to is never fatal."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from cadenza.engine.events import MovementStarted, SessionFinished
from cadenza.engine.transcript import (
    CheckpointRecord,
    EventRecord,
    MessageRecord,
    SessionEndRecord,
    SessionStartRecord,
    read_transcript,
    transcript_path,
)
from cadenza.messages import AssistantMessage, ToolMessage, UserMessage
from tests.lsp.harness import Harness
from tests.support.fake_openai import FakeOpenAI, Reply, call, text, tool_call


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's ``XDG_STATE_HOME`` (see ``harness.server_env``), also set for this process."""
    folder = tmp_path / "home" / "xdg_state_home"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


async def test_a_session_leaves_a_transcript(
    editor: Harness, fake: FakeOpenAI, workspace: Path, state_home: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    fake.script(call("read_file", {"path": "a.py"}, "c1"), text("x is 1."))
    session_id, end = await editor.run("What is x?")
    assert end["stopReason"] == "end_turn"

    path = transcript_path(session_id)
    assert path == state_home / "cadenza" / "sessions" / f"{session_id}.jsonl"
    records = read_transcript(path)
    start, *middle, last = records
    assert isinstance(start, SessionStartRecord)
    assert (start.session_id, start.task, start.workflow, start.model) == (
        session_id,
        "What is x?",
        "default",
        "openai/test",
    )
    assert Path(start.root) == workspace.resolve()
    assert isinstance(last, SessionEndRecord)
    assert (last.stop_reason, last.message) == ("end_turn", "x is 1.")

    messages = [r.message for r in middle if isinstance(r, MessageRecord)]
    roles = ["system", "user", "user", "assistant", "tool", "assistant"]
    assert [m.role for m in messages] == roles
    assert isinstance(messages[1], UserMessage) and messages[1].tag == "workspace"
    assert isinstance(messages[2], UserMessage) and messages[2].content == "What is x?"
    assert isinstance(messages[3], AssistantMessage) and messages[3].tool_calls[0].id == "c1"
    assert isinstance(messages[4], ToolMessage) and "x = 1" in messages[4].content
    events = [r.event for r in middle if isinstance(r, EventRecord)]
    assert isinstance(events[0], MovementStarted)
    assert isinstance(events[-1], SessionFinished)
    kinds = [e.kind for e in events]
    assert "tool_call" in kinds and "tool_call_update" in kinds and "step" in kinds
    assert "agent_message_chunk" not in kinds  # the whole reply is a message record
    assert [r.movement for r in middle if isinstance(r, CheckpointRecord)] == ["work"]


async def test_the_transcript_names_the_workflow_and_keeps_needs_user_input(
    editor: Harness, fake: FakeOpenAI, state_home: Path
) -> None:
    arguments = {
        "status": "needs_user_input",
        "summary": "Which name?",
        "missing_info": "the new name",
        "why_no_default": "no name is implied",
    }
    fake.script(Reply(tool_calls=[tool_call("complete", arguments, "c1")]))
    session_id, end = await editor.run("rename", workflow="plan-implement-review")
    assert end["stopReason"] == "needs_user_input"
    records = read_transcript(transcript_path(session_id))
    assert isinstance(records[0], SessionStartRecord)
    assert records[0].workflow == "plan-implement-review"
    [finished] = [
        r.event
        for r in records
        if isinstance(r, EventRecord) and isinstance(r.event, SessionFinished)
    ]
    assert (finished.missing_info, finished.why_no_default) == (
        "the new name",
        "no name is implied",
    )
    assert isinstance(records[-1], SessionEndRecord)
    assert records[-1].stop_reason == "needs_user_input"


async def test_a_session_runs_without_its_transcript_when_the_state_dir_is_unusable(
    editor: Harness, fake: FakeOpenAI, state_home: Path
) -> None:
    (state_home / "cadenza").write_text("a file where the folder should be")
    fake.script(text("done anyway"))
    session_id, end = await editor.run("hi")
    assert end["stopReason"] == "end_turn"
    assert end["message"] == "done anyway"
    warnings = [
        m.message for m in editor.client.log_messages if m.type == types.MessageType.Warning
    ]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"session {session_id}: the session runs without a transcript: ")
    assert editor.client.messages == []  # a log line, not a popup
