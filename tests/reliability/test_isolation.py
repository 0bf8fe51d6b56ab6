"""Suite 5, isolation: 50 concurrent sessions in one server, each on its own workspace.

Session ``n`` has the task ``... TOKEN-n`` and the workspace ``wsN`` holding ``secret.txt``
(``SECRET-n``); the model (``routing_openai``) reads the secret and writes ``out.txt``. No
event, tool result, file or prompt may cross sessions: every update of session ``n`` mentions
only ``TOKEN-n``/``SECRET-n``, and so does its transcript and every model request it made;
each workspace ends with exactly its own two files.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

from tests.lsp.harness import capabilities, file_uri, server_env, start_harness, stop_harness
from tests.reliability.knobs import scaled
from tests.reliability.routing_openai import RoutingOpenAI

SESSIONS = scaled(50, 200)
MARK = re.compile(r"(?:TOKEN|SECRET)-(\d+)")


async def test_concurrent_sessions_are_isolated(tmp_path: Path) -> None:
    started = time.monotonic()
    roots = []
    for n in range(SESSIONS):
        root = tmp_path / f"ws{n}"
        root.mkdir()
        (root / "secret.txt").write_text(f"SECRET-{n}\n")
        roots.append(root)
    with RoutingOpenAI() as model:
        harness, _ = await start_harness(
            root=tmp_path / "ws0",
            env=server_env(model.base_url, tmp_path / "home"),
            caps=capabilities(),
        )
        harness.autosave = True
        try:
            ids = await asyncio.gather(
                *(
                    harness.start(f"copy the secret, TOKEN-{n}", rootUri=file_uri(roots[n]))
                    for n in range(SESSIONS)
                )
            )
            ends = await asyncio.gather(*(harness.wait_end(i, timeout=120) for i in ids))
        finally:
            await stop_harness(harness)
        leaks = list(model.leaks)
        overlap = model.max_in_flight
    assert not leaks, leaks[:5]
    for n, (session_id, end) in enumerate(zip(ids, ends, strict=True)):
        assert end["stopReason"] == "end_turn", (n, end)
        seen = set(MARK.findall(json.dumps(harness.updates[session_id])))
        assert seen == {str(n)}, f"session {n} saw the marks of sessions {sorted(seen)}"
        files = sorted(p.name for p in roots[n].iterdir())
        assert files == ["out.txt", "secret.txt"], (n, files)
        out = (roots[n] / "out.txt").read_text()
        assert set(MARK.findall(out)) == {str(n)}, (n, out)
        assert f"SECRET-{n}" in out
    sessions_dir = tmp_path / "home" / "xdg_state_home" / "cadenza" / "sessions"
    for n, session_id in enumerate(ids):
        transcript = (sessions_dir / f"{session_id}.jsonl").read_text()
        seen = set(MARK.findall(transcript))
        assert seen == {str(n)}, f"transcript {n} holds the marks of sessions {sorted(seen)}"
    assert overlap > 1, "the sessions did not run concurrently"
    print(
        f"\nisolation: {SESSIONS} concurrent sessions (up to {overlap} model requests at once), "
        f"{time.monotonic() - started:.1f} s"
    )
