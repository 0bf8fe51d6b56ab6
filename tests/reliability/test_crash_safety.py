"""Suite 4, crash safety: SIGKILL the server at random points of sessions, restart, check.

A headless client (``cadenza.client.HeadlessClient``, which writes edits to disk) runs a session
against a slow scripted model that writes, edits and creates files. At a random moment the
server gets SIGKILL. Then: every file is either wholly old or wholly new; a new server's
``cadenza.loadSession`` loads the session (state ``interrupted``, or its stop reason if it had
ended), and its replay (built from the transcript, ``<XDG_STATE_HOME>/cadenza/sessions/<id>.jsonl``)
holds every ``cadenza/sessionUpdate`` the client had received, in order; and its
``cadenza.undoSession`` puts every file back as it was before the session.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from cadenza.client import ClientOptions, HeadlessClient
from tests.lsp.harness import capabilities, server_env, start_harness, stop_harness
from tests.reliability.knobs import scaled
from tests.support.fake_openai import FakeOpenAI, Reply, tool_call

KILLS = scaled(4, 40)
DELAY_S = 0.15
OLD = "".join(f"OLD line {i} {'o' * 60}\n" for i in range(300))
NEW = OLD.replace("OLD", "NEW")
SERVE = (sys.executable, "-m", "cadenza", "serve", "--log-level", "WARNING")


def slow(name: str, args: dict[str, Any], call_id: str) -> Reply:
    return Reply(tool_calls=[tool_call(name, args, call_id)], delay_s=DELAY_S)


SCRIPT = [
    slow("write_file", {"path": "new1.txt", "content": NEW}, "c1"),
    slow(
        "edit_file",
        {"path": "old1.txt", "old_string": "OLD", "new_string": "NEW", "replace_all": True},
        "c2",
    ),
    slow("write_file", {"path": "old2.txt", "content": NEW}, "c3"),
    slow("create_file", {"path": "sub/new2.txt", "content": NEW}, "c4"),
    slow(
        "edit_file",
        {"path": "old3.txt", "old_string": "OLD", "new_string": "NEW", "replace_all": True},
        "c5",
    ),
    Reply(content="all done", delay_s=DELAY_S),
]
OLD_FILES = ("old1.txt", "old2.txt", "old3.txt")
NEW_FILES = ("new1.txt", "sub/new2.txt")
COMPARED = ("tool_call", "tool_call_update", "movement", "session_end")


def _live_updates(events: Path, session_id: str) -> list[dict[str, Any]]:
    if not events.exists():
        return []
    updates = []
    for line in events.read_text().splitlines():
        record = json.loads(line)
        params = record.get("params") or {}
        if (
            record.get("method") == "cadenza/sessionUpdate"
            and params.get("sessionId") == session_id
        ):
            updates.append(params["update"])
    return updates


def _is_subsequence(needles: list[Any], haystack: list[Any]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


async def _run_and_kill(root: Path, home: Path, events: Path, kill_after: float) -> str:
    with FakeOpenAI(list(SCRIPT)) as fake:
        options = ClientOptions(
            workspace=root,
            model="openai/test",
            server_command=SERVE,
            env=server_env(fake.base_url, home),
            start_timeout=30,
            shutdown_timeout=1,
            events_path=events,
        )
        client = HeadlessClient(options)
        await client.start()
        try:
            session_id = await client.start_session("rewrite the files")
            await asyncio.sleep(kill_after)
            process = client._lsp.process if client._lsp else None
            assert process is not None
            os.kill(process.pid, signal.SIGKILL)
            await process.wait()
        finally:
            await client.close()
    return session_id


async def test_sigkill_at_random_points(tmp_path: Path) -> None:
    started = time.monotonic()
    rng = random.Random(int(os.environ.get("CADENZA_RELIABILITY_SEED", "9")))
    home = tmp_path / "home"
    runs: list[tuple[str, Path, Path, float]] = []
    for n in range(KILLS):
        root = tmp_path / f"ws{n}"
        root.mkdir()
        for name in OLD_FILES:
            (root / name).write_text(OLD)
        events = tmp_path / f"events{n}.jsonl"
        kill_after = rng.uniform(0.0, DELAY_S * len(SCRIPT) + 0.3)
        session_id = await _run_and_kill(root, home, events, kill_after)
        runs.append((session_id, root, events, kill_after))
        for name in OLD_FILES:
            assert (root / name).read_text() in (OLD, NEW), f"{name} half-written"
        for name in NEW_FILES:
            path = root / name
            assert not path.exists() or path.read_text() == NEW, f"{name} half-written"
        leftovers = [
            p.name
            for p in root.rglob("*")
            if p.is_file() and p.relative_to(root).as_posix() not in OLD_FILES + NEW_FILES
        ]
        assert not leftovers, leftovers

    # a new server loads every killed session; its replay holds what the client had seen
    with FakeOpenAI() as fake:
        harness, _ = await start_harness(
            root=runs[0][1], env=server_env(fake.base_url, home), caps=capabilities()
        )
        try:
            listed = await harness.execute("cadenza.listSessions", {})
            states = {s["sessionId"]: s["state"] for s in listed["sessions"]}
            compared = interrupted = undone = 0
            for session_id, _root, events, kill_after in runs:
                live = [
                    u for u in _live_updates(events, session_id) if u["sessionUpdate"] in COMPARED
                ]
                result = await harness.execute("cadenza.loadSession", {"sessionId": session_id})
                replay = [
                    u for u in harness.updates.get(session_id, []) if u["sessionUpdate"] in COMPARED
                ]
                assert result["updates"] >= len(live)
                assert _is_subsequence(live, replay), (kill_after, live, replay)
                compared += len(live)
                interrupted += states[session_id] == "interrupted"
                ended = bool(live) and live[-1]["sessionUpdate"] == "session_end"
                assert states[session_id] == ("end_turn" if ended else "interrupted"), (
                    kill_after,
                    states[session_id],
                    live[-1:],
                )
            # undo after the crash puts every file back as it was before the session
            harness.autosave = True
            for session_id, root, _events, kill_after in runs:
                undo: Any = None
                try:
                    undo = await harness.execute("cadenza.undoSession", {"sessionId": session_id})
                except Exception as exc:  # nothing to undo is refused; anything else fails
                    changed = [n for n in OLD_FILES if (root / n).read_text() != OLD]
                    changed += [n for n in NEW_FILES if (root / n).exists()]
                    assert not changed, (kill_after, changed, exc)
                for name in OLD_FILES:
                    assert (root / name).read_text() == OLD, (kill_after, name, "not undone", undo)
                for name in NEW_FILES:
                    assert not (root / name).exists(), (kill_after, name, "not removed", undo)
                undone += 1
        finally:
            await stop_harness(harness)
    print(
        f"\ncrash safety: {KILLS} SIGKILLs, {compared} live updates found in the replays, "
        f"{interrupted} sessions interrupted, {undone} undone, {time.monotonic() - started:.1f} s"
    )
