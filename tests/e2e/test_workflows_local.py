"""End to end: a built-in workflow of several movements through a real ``cadenza serve`` with
SmolLM2-135M (the one-movement default workflow: test_client_local.py).

A minimal editor written against the wire (``rawclient.py``) starts a session with
``workflow`` set, on a copy of examples/inventory. Structural assertions only: the
``movement`` updates start with the workflow's first movement, count up, name only the
workflow's movements, and every hand-over is legal (the movement's ``default_next`` or an
accepted ``transition``); step progress names the running movement; ``session_end`` arrives
once with a documented stop reason; the transcript agrees with the wire, has a checkpoint per
finished movement and a history in which every tool call is answered (the strict servers'
rule, checked on the recorded live history, not a sanitized copy); read-only movements edit
nothing; no process is left.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cadenza.engine.events import FileEdited, MovementStarted, ToolCallFinished, ToolCallStarted
from cadenza.engine.history import check_strict
from cadenza.engine.transcript import CheckpointRecord, EventRecord, history_from_records
from cadenza.engine.workflows import Workflow, load_catalog
from tests.e2e.rawclient import RawClient
from tests.e2e.support import (
    MODEL,
    TASK,
    ProcessWatch,
    Sandbox,
    Transcript,
    Wire,
    assert_apply_edits_on_wire,
    assert_only_workspace_changed,
    assert_progress_on_wire,
    assert_session_end_on_wire,
    assert_transcript_shape,
    only_transcript,
    require_model,
    snapshot,
)

pytestmark = pytest.mark.e2e

TIMEOUT_S = 600.0
CASES = [
    # (workflow, the session's step bound): enough for plan-implement-review to hand over at
    # least once (plan's own bound is 8 steps), small enough to stay fast with SmolLM2. The
    # default workflow (one movement) runs end to end in test_client_local.py, which checks its
    # movement, checkpoint and strict history too, and in test_cadenza_run_local.py.
    ("plan-implement-review", 10),
]
# A local model runs against a time budget: its step reports end with "· 12 s of 10 min".
STEP_REPORT = re.compile(
    r"^(?P<movement>\S+) · step (?P<step>\d+)/(?P<of>\d+)"
    r"(?: · [0-9][0-9a-z ]* of [0-9][0-9a-z ]*)?$"  # "· 12 s of 10 min", never the activity line
)
EDIT_TOOLS = {"edit_file", "write_file"}


def builtin_workflow(name: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Workflow:
    """The workflow as the server sees it (built-ins; the sandbox's empty user config)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(sandbox.config))
    return load_catalog(None).get(name)


def movement_spans(transcript: Transcript) -> list[tuple[MovementStarted, list[Any]]]:
    """The transcript's events cut at each ``movement`` event."""
    spans: list[tuple[MovementStarted, list[Any]]] = []
    for record in transcript.records:
        if not isinstance(record, EventRecord):
            continue
        event = record.event
        if isinstance(event, MovementStarted):
            spans.append((event, []))
        elif spans:
            spans[-1][1].append(event)
        else:
            assert event.kind != "step", f"a model step before the first movement: {event}"
    return spans


def accepted_transitions(events: list[Any]) -> set[str]:
    """Targets of the ``transition`` calls the engine accepted in one movement."""
    calls = {
        e.tool_call_id: e
        for e in events
        if isinstance(e, ToolCallStarted) and e.name == "transition"
    }
    targets = set()
    for e in events:
        if isinstance(e, ToolCallFinished) and e.tool_call_id in calls and e.status == "completed":
            targets.add(json.loads(calls[e.tool_call_id].raw_input)["next"])
    return targets


def assert_movements_on_wire(
    wire: Wire, session_id: str, workflow: Workflow
) -> list[dict[str, Any]]:
    updates = wire.session_updates(session_id)
    assert updates and updates[0]["sessionUpdate"] == "movement", updates[:3]
    movements = [u for u in updates if u["sessionUpdate"] == "movement"]
    names = [m["movement"] for m in movements]
    assert names[0] == workflow.movements[0].name, names
    assert movements[0]["reason"] == "", movements[0]
    assert [m["index"] for m in movements] == list(range(1, len(movements) + 1)), movements
    assert {m["workflow"] for m in movements} == {workflow.name}, movements
    assert set(names) <= set(workflow.movement_names), names
    return movements


def assert_step_reports_name_the_movement(wire: Wire, session_id: str, token: Any) -> int:
    """Walk the wire in order: each ``step`` progress report names the movement running."""
    running = None
    reports = 0
    for entry in wire.entries:
        msg = entry["msg"]
        if entry["dir"] != "s2c":
            continue
        params = msg.get("params") or {}
        if msg.get("method") == "cadenza/sessionUpdate" and params.get("sessionId") == session_id:
            if params["update"]["sessionUpdate"] == "movement":
                running = params["update"]["movement"]
        elif msg.get("method") == "$/progress" and params.get("token") == token:
            value = params["value"]
            match = STEP_REPORT.match(value.get("message") or "")
            if value["kind"] == "report" and match:
                assert match["movement"] == running, (value, running)
                reports += 1
    return reports


def assert_handovers_legal(spans: list[tuple[MovementStarted, list[Any]]], wf: Workflow) -> None:
    for (current, events), (following, _) in itertools.pairwise(spans):
        movement = wf.movement(current.movement)
        assert movement is not None, current
        allowed = {movement.default_next} | accepted_transitions(events)
        assert following.movement in allowed, (
            f"{current.movement} handed over to {following.movement}; allowed: {allowed}"
        )
        steps = sum(1 for e in events if e.kind == "step")
        if movement.max_steps is not None:
            assert steps <= movement.max_steps, (movement.name, steps)


def assert_edits_only_where_allowed(
    spans: list[tuple[MovementStarted, list[Any]]], wf: Workflow
) -> None:
    for started, events in spans:
        movement = wf.movement(started.movement)
        assert movement is not None
        may_edit = movement.tools is None or bool(EDIT_TOOLS & set(movement.tools))
        edits = [e for e in events if isinstance(e, FileEdited)]
        assert may_edit or not edits, f"movement {movement.name} is read-only but edited: {edits}"


@pytest.mark.parametrize(("name", "max_steps"), CASES)
async def test_builtin_workflow_through_the_server(
    name: str,
    max_steps: int,
    sandbox: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_model()
    workflow = builtin_workflow(name, sandbox, monkeypatch)
    watched_before = snapshot(sandbox.watched)
    root = sandbox.workspace.resolve()

    with ProcessWatch(sandbox.marker) as watch:
        client = await RawClient.start(
            root=root,
            env=sandbox.env,
            stderr=tmp_path / "serve.stderr",
            # Bounded replies: a runaway 1,024-token reply costs ~20 s on a loaded machine.
            init_options={"maxSteps": max_steps, "maxTokens": 256},
        )
        try:
            session_id = await client.start_session(
                {"task": TASK, "rootUri": root.as_uri(), "model": MODEL, "workflow": name}
            )
            await client.wait_end(session_id, TIMEOUT_S)
        finally:
            status = await client.close()
    wire = Wire([{"dir": d, "msg": m} for d, m in client.log])
    stderr = (tmp_path / "serve.stderr").read_text(errors="replace")[-3000:]
    assert status == 0, f"cadenza serve exited with {status} after shutdown/exit:\n{stderr}"

    # The wire: progress brackets the session, movements in a legal order, one session_end.
    end = assert_session_end_on_wire(wire, session_id)
    values = assert_progress_on_wire(wire, stop_reason=end["stopReason"])
    token = wire.from_server("window/workDoneProgress/create")[0]["params"]["token"]
    movements = assert_movements_on_wire(wire, session_id, workflow)
    print(
        f"{name}: {end['stopReason']} after {end['steps']} steps; movements "
        f"{[m['movement'] for m in movements]}; {len(values)} progress values"
    )
    assert 1 <= end["steps"] <= max_steps, end
    if end["stopReason"] == "max_steps":
        assert end["steps"] == max_steps, end
    assert assert_step_reports_name_the_movement(wire, session_id, token) == end["steps"]
    edits = assert_apply_edits_on_wire(wire, root)
    print(f"applyEdit requests: {edits}")

    # The transcript: the same movements, legal hand-overs, checkpoints, no dangling call.
    transcript = only_transcript(sandbox)
    assert_transcript_shape(transcript, session_id=session_id)
    assert transcript.start.workflow == name
    assert transcript.end.stop_reason == end["stopReason"]
    spans = movement_spans(transcript)
    assert [(s.movement, s.index, s.reason) for s, _ in spans] == [
        (m["movement"], m["index"], m["reason"]) for m in movements
    ]
    assert_handovers_legal(spans, workflow)
    assert_edits_only_where_allowed(spans, workflow)
    checkpoints = [r.movement for r in transcript.records if isinstance(r, CheckpointRecord)]
    finished = [s.movement for s, _ in spans]
    assert checkpoints == finished, (checkpoints, finished)  # one per movement, the cut one too
    check_strict(history_from_records(transcript.records))

    # Files and processes.
    assert_only_workspace_changed(sandbox, watched_before)
    assert watch.cadenza_servers(), f"no `cadenza serve` process was seen: {watch.seen}"
    assert watch.llama_servers(), f"no llama-server process was seen: {watch.seen}"
    leftovers = watch.leftovers()
    assert leftovers == {}, f"processes left running after the server exited: {leftovers}"
