"""End to end in the text edit format: a real ``cadenza serve`` under ``[loop] edit = "text"``
starting a real llama-server with SmolLM2-135M, on a copy of examples/inventory.

Structural, as the other end-to-end tests: what the 135M model writes is not judged, but
whatever it writes must travel as text and be read as the format says. The person sees the
reply as it is typed (text, not an envelope's JSON); every reply in the transcript is kept as
the model wrote it and holds exactly the calls the text format's reader finds in it; the
session ends once for a documented reason; only the workspace changes; nothing is left
running.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cadenza.client.events import ClientEvent
from cadenza.client.options import ClientOptions
from cadenza.client.session import run_task
from cadenza.providers.text_reply import read_text
from cadenza.schema.updates import AgentMessageChunk, SessionEnd
from tests.e2e.support import (
    FINISHED_REASONS,
    MODEL,
    TASK,
    ProcessWatch,
    Sandbox,
    assert_only_workspace_changed,
    assert_transcript_shape,
    only_transcript,
    require_model,
    snapshot,
)

pytestmark = pytest.mark.e2e

MAX_STEPS = 3
TIMEOUT_S = 600.0


def _is_envelope(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "tool_calls" in value


async def test_a_session_in_the_text_format(sandbox: Sandbox, tmp_path: Path) -> None:
    require_model()
    config = sandbox.config / "cadenza" / "cadenza.toml"
    config.write_text(config.read_text() + '\n[loop]\nedit = "text"\nending = "empty"\n')
    before = snapshot(sandbox.watched)
    events: list[ClientEvent] = []
    options = ClientOptions(
        workspace=sandbox.workspace,
        model=MODEL,
        max_steps=MAX_STEPS,
        env=sandbox.env,
        start_timeout=120.0,
        shutdown_timeout=30.0,
        review="auto",
    )
    with ProcessWatch(sandbox.marker) as watch:
        ended = await asyncio.wait_for(run_task(options, TASK, observer=events.append), TIMEOUT_S)
    finished = ended.outcome
    print(f"outcome: {finished.stop_reason}, {finished.steps} steps, {ended.wall_time:.1f} s")
    assert ended.outcome.stop_reason in FINISHED_REASONS, ended
    assert len([e for e in events if isinstance(e, SessionEnd)]) == 1

    transcript = only_transcript(sandbox)
    assert_transcript_shape(transcript, session_id=ended.session_id)
    replies = transcript.assistant_messages()
    assert replies, "no reply in the transcript"
    streamed = "".join(e.content.text for e in events if isinstance(e, AgentMessageChunk))
    for reply in replies:
        print(f"reply: {reply.content[:300]!r} -> {[c.name for c in reply.tool_calls]}")
        assert not _is_envelope(reply.content), "a text-format reply came as a JSON envelope"
        # Kept as written, shown as typed, and holding exactly the calls its text holds.
        assert reply.content in streamed
        read = read_text(reply.content).calls
        assert [c.name for c in reply.tool_calls] == [c.name for c in read]

    assert_only_workspace_changed(sandbox, before)
    assert watch.llama_servers(), f"no llama-server process was seen: {watch.seen}"
    leftovers = watch.leftovers()
    assert leftovers == {}, f"processes left running after run_task returned: {leftovers}"
