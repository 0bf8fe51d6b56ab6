"""End to end through the client library: ``run_task`` against a real ``cadenza serve`` that
starts a real llama-server with SmolLM2-135M, on a copy of examples/inventory.

The server is started behind ``wiretap.py`` (a transparent stdio relay), so the assertions
read the real wire as well as what the library reported to its observer. Structural only:
progress begins and ends, ``session_end`` arrives once with a documented stop reason, every
``workspace/applyEdit`` is well-formed and inside the workspace, the transcript holds the default
workflow's one movement with its checkpoint and a history in which every tool call is answered,
and no process is left.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from cadenza.client.events import ClientEvent, EditRejected, EditWritten, Progress
from cadenza.client.options import ClientOptions
from cadenza.client.session import run_task
from cadenza.engine.history import check_strict
from cadenza.engine.transcript import CheckpointRecord, history_from_records
from cadenza.schema.updates import SessionEnd, ToolCall, ToolCallUpdate
from tests.e2e.support import (
    FINISHED_REASONS,
    MODEL,
    TASK,
    ProcessWatch,
    Sandbox,
    Wire,
    assert_apply_edits_on_wire,
    assert_inside,
    assert_only_workspace_changed,
    assert_progress_on_wire,
    assert_session_end_on_wire,
    assert_transcript_shape,
    only_transcript,
    require_model,
    snapshot,
)

pytestmark = pytest.mark.e2e

MAX_STEPS = 4
TIMEOUT_S = 600.0
WIRETAP = Path(__file__).with_name("wiretap.py")


def options(sandbox: Sandbox, wire_log: Path) -> ClientOptions:
    serve = (sys.executable, "-m", "cadenza", "serve")
    return ClientOptions(
        workspace=sandbox.workspace,
        model=MODEL,
        max_steps=MAX_STEPS,
        server_command=(sys.executable, str(WIRETAP), str(wire_log), *serve),
        env=sandbox.env,
        start_timeout=120.0,
        shutdown_timeout=30.0,
    )


def assert_progress_bracketed(events: list[ClientEvent]) -> None:
    """One ``begin`` before anything else of the session, one ``end`` before ``session_end``."""
    kinds = [e.kind for e in events if isinstance(e, Progress)]
    assert kinds, "no work-done progress observed"
    assert kinds[0] == "begin" and kinds.count("begin") == 1, kinds
    assert kinds[-1] == "end" and kinds.count("end") == 1, kinds
    begin = next(i for i, e in enumerate(events) if isinstance(e, Progress))
    end = next(i for i, e in enumerate(events) if isinstance(e, Progress) and e.kind == "end")
    session_end = next(i for i, e in enumerate(events) if isinstance(e, SessionEnd))
    tool_events = [i for i, e in enumerate(events) if isinstance(e, ToolCall | ToolCallUpdate)]
    assert all(begin < i < end for i in tool_events), "tool activity outside the progress"
    assert end < session_end, "progress ended after session_end"


def assert_tool_calls_answered(events: list[ClientEvent]) -> None:
    """Every ``tool_call`` shown gets a final ``tool_call_update`` (completed or failed)."""
    started = [e.tool_call_id for e in events if isinstance(e, ToolCall)]
    finished = {
        e.tool_call_id
        for e in events
        if isinstance(e, ToolCallUpdate) and e.status in ("completed", "failed")
    }
    # Under the default text format a reply may hold no call (a reply without blocks ends the
    # turn): none started is an answer too.
    assert len(set(started)) == len(started), f"tool call ids repeat: {started}"
    assert set(started) <= finished, f"tool calls without a result: {set(started) - finished}"


async def test_run_task_through_the_client_library(sandbox: Sandbox, tmp_path: Path) -> None:
    require_model()
    wire_log = tmp_path / "wire.jsonl"
    watched_before = snapshot(sandbox.watched)
    events: list[ClientEvent] = []

    with ProcessWatch(sandbox.marker) as watch:
        ended = await asyncio.wait_for(
            run_task(options(sandbox, wire_log), TASK, observer=events.append), TIMEOUT_S
        )
    finished = ended.outcome
    print(f"outcome: {finished.stop_reason}, {finished.steps} steps, {ended.wall_time:.1f} s")

    # The session ended once, for a documented reason, as the library and the wire both say.
    assert ended.outcome.stop_reason in FINISHED_REASONS, ended
    assert 1 <= ended.outcome.steps <= MAX_STEPS, ended
    ends = [e for e in events if isinstance(e, SessionEnd)]
    assert len(ends) == 1, ends
    assert (ends[0].stop_reason, ends[0].steps) == (ended.outcome.stop_reason, ended.outcome.steps)
    assert_progress_bracketed(events)
    assert_tool_calls_answered(events)

    wire = Wire.read(wire_log)
    assert_progress_on_wire(wire, stop_reason=ended.outcome.stop_reason)
    end = assert_session_end_on_wire(wire, ended.session_id)
    assert end["stopReason"] == ended.outcome.stop_reason
    edits = assert_apply_edits_on_wire(wire, sandbox.workspace)
    written = [e for e in events if isinstance(e, EditWritten)]
    refused = [e for e in events if isinstance(e, EditRejected)]
    assert len(written) + len(refused) == edits, (written, refused)
    for change in ended.changes:
        assert_inside(change.path.as_uri(), sandbox.workspace)
    print(f"applyEdit requests: {edits} ({len(written)} written, {len(refused)} refused)")

    # Files: only the workspace changed, and it is still valid UTF-8.
    assert_only_workspace_changed(sandbox, watched_before)

    # The transcript is the same session, ending the same way: the default workflow's one
    # movement, its checkpoint, and a history in which every tool call is answered.
    transcript = only_transcript(sandbox)
    assert_transcript_shape(transcript, session_id=ended.session_id)
    assert transcript.end.stop_reason == ended.outcome.stop_reason
    assert len(transcript.events("step")) == ended.outcome.steps
    assert transcript.start.workflow == "default"
    movements = [e.movement for e in transcript.events("movement")]
    on_wire = wire.session_updates(ended.session_id)
    assert movements == [u["movement"] for u in on_wire if u["sessionUpdate"] == "movement"]
    assert len(movements) == 1, movements
    checkpoints = [r.movement for r in transcript.records if isinstance(r, CheckpointRecord)]
    assert checkpoints == movements, checkpoints
    check_strict(history_from_records(transcript.records))

    # The server (behind the tap) and its llama-server ran, and both are gone.
    servers = watch.cadenza_servers()
    assert wire.server_pid in servers, (wire.server_pid, watch.seen)
    assert watch.llama_servers(), f"no llama-server process was seen: {watch.seen}"
    leftovers = watch.leftovers()
    assert leftovers == {}, f"processes left running after run_task returned: {leftovers}"
