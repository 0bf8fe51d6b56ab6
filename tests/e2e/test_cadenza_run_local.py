"""End to end: the real ``cadenza run`` CLI, a real ``cadenza serve``, a real llama-server with
SmolLM2-135M, on a copy of examples/inventory.

The assertions are structural (a small model's answers vary): the run ends with a documented exit
status for a finished session, says why it stopped; the server's messages it logged (``--events``)
show the progress begun and ended, one ``session_end`` and only well-formed edits inside the
workspace; it writes only inside the workspace copy, leaves valid UTF-8 files, and the transcript
agrees with the CLI; no process is left behind. What the 135M model makes of the task is not judged.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cadenza.client.display import ENDINGS
from tests.e2e.support import (
    FINISHED_REASONS,
    MODEL,
    TASK,
    ProcessWatch,
    Sandbox,
    Wire,
    assert_only_workspace_changed,
    assert_progress_on_wire,
    assert_session_end_on_wire,
    assert_transcript_shape,
    assert_well_formed_apply_edit,
    cadenza_executable,
    changed_paths,
    only_transcript,
    require_model,
    snapshot,
)

pytestmark = pytest.mark.e2e

MAX_STEPS = 6
TIMEOUT_S = 600.0
EXIT_STATUS = {
    "end_turn": 0,
    "max_steps": 3,
    "needs_user_input": 3,
    "waiting_human": 3,
    # complete(failed) and an ABORT exit are ends of a finished session too; the CLI maps every
    # reason that is neither end_turn nor "incomplete" to 1 (cadenza/client/cli.py).
    "failed": 1,
    "aborted": 1,
}
SUMMARY = re.compile(
    r"^(?P<said>[^\n]+?) [·-] (?P<steps>\d+) steps? in the session [·-] (?P<wall>[\d.]+) s$",
    re.MULTILINE,
)
CHANGED_HEADER = re.compile(r"^files changed \((?P<count>\d+)\):$", re.MULTILINE)


def run_cli(sandbox: Sandbox, events: Path) -> tuple[int, str, str, float]:
    """Run ``cadenza run`` to its end; kill its process group if it outlives TIMEOUT_S."""
    command = [
        str(cadenza_executable()),
        "run",
        "--workspace",
        str(sandbox.workspace),
        "--model",
        MODEL,
        "--yes",
        "--max-steps",
        str(MAX_STEPS),
        "--events",
        str(events),
        TASK,
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=sandbox.watched,  # a stray write to the working folder would show up as a change
        env=sandbox.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(
            f"cadenza run did not finish within {TIMEOUT_S:.0f} s\n--- stdout\n{out}\n"
            f"--- stderr\n{err[-4000:]}"
        )
    return proc.returncode, out, err, time.monotonic() - started


def test_cadenza_run_on_example_workspace(sandbox: Sandbox, tmp_path: Path) -> None:
    require_model()
    events = tmp_path / "events.jsonl"  # outside the watched folder: the CLI writes it
    watched_before = snapshot(sandbox.watched)
    workspace_before = snapshot(sandbox.workspace)

    with ProcessWatch(sandbox.marker) as watch:
        status, out, err, wall = run_cli(sandbox, events)
    report = f"exit {status} after {wall:.1f} s\n--- stdout\n{out}\n--- stderr\n{err[-4000:]}"
    print(report)  # shown by pytest with the failure, or with -s

    # The summary says in words why the session stopped (the stop reason is on the wire),
    # and the exit status is the documented one.
    summaries = SUMMARY.findall(out)
    assert len(summaries) == 1, f"expected one summary line\n{report}"
    said, steps_text, _ = summaries[0]
    steps = int(steps_text)
    reason = next(r for r, words in ENDINGS.items() if words == said)
    assert reason in FINISHED_REASONS, f"the session did not finish cleanly: {reason}\n{report}"
    assert status == EXIT_STATUS[reason], f"stop reason {reason} → exit {status}\n{report}"
    assert 1 <= steps <= MAX_STEPS, report
    if reason == "max_steps":
        assert steps == MAX_STEPS, report

    # The server's messages as the CLI received them (--events): progress begun and ended,
    # one session_end with the same stop reason, every applyEdit well-formed and inside.
    wire = Wire.from_events(events)
    assert_progress_on_wire(wire, stop_reason=reason)
    session_ids = {m["params"]["sessionId"] for m in wire.from_server("cadenza/sessionUpdate")}
    assert len(session_ids) == 1, session_ids
    (session_id,) = session_ids
    end = assert_session_end_on_wire(wire, session_id)
    assert (end["stopReason"], end["steps"]) == (reason, steps), (end, report)
    apply_edits = wire.from_server("workspace/applyEdit")
    for request in apply_edits:
        assert_well_formed_apply_edit(request["params"], sandbox.workspace)
    print(f"applyEdit requests: {len(apply_edits)}")

    # Nothing outside the workspace copy changed; everything inside is valid UTF-8.
    assert_only_workspace_changed(sandbox, watched_before)

    # The summary's list of changed files agrees with the disk.
    workspace_after = snapshot(sandbox.workspace)
    changed = {
        p
        for p in changed_paths(workspace_before, workspace_after)
        if workspace_after.get(p) != "dir" and workspace_before.get(p) != "dir"
    }
    header = CHANGED_HEADER.search(out)
    if header is None:
        assert "no files changed" in out, report
        assert changed == set(), f"files changed on disk but not in the summary: {changed}"
    else:
        assert int(header["count"]) == len(changed), f"on disk: {sorted(changed)}\n{report}"
        for path in changed:
            assert path in out[header.end() :], f"{path} changed but is not listed\n{report}"

    # Real processes ran, and none is left.
    assert watch.cadenza_servers(), f"no `cadenza serve` process was seen: {watch.seen}"
    assert watch.llama_servers(), f"no llama-server process was seen: {watch.seen}"
    leftovers = watch.leftovers()
    assert leftovers == {}, f"processes left running after cadenza run exited: {leftovers}"

    # The server's transcript agrees with the CLI.
    transcript = only_transcript(sandbox)
    assert_transcript_shape(transcript, session_id=session_id)
    assert transcript.start.task == TASK
    assert transcript.start.workflow == "default"
    assert transcript.start.root == str(sandbox.workspace.resolve())
    assert transcript.end.stop_reason == reason, report
    assert len(transcript.events("step")) == steps, report
