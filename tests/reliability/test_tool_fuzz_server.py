"""Suite 2, tool-call fuzzing through the real server: the model asks for escapes.

A scripted model sends, in a few replies of many parallel tool calls, every tool with every
escaping path (``..``, absolute paths, symlinks out of the root, NUL); the client (the
pytest-lsp harness) applies whatever ``workspace/applyEdit`` it gets to disk, so an escape
the server let through would show in the snapshot of the sibling folder ``outside``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.lsp.harness import capabilities, server_env, start_harness, stop_harness
from tests.reliability.knobs import scaled
from tests.reliability.toolfuzz import escaping_paths, make_layout, snapshot
from tests.support.fake_openai import FakeOpenAI, Reply, text, tool_call

PER_REPLY = 20


def hostile_calls(outside: Path) -> list[tuple[str, dict[str, Any]]]:
    paths = [*escaping_paths(outside), "a\x00b", "linkdir", "src/rel-link"]
    if not scaled(0, 1):
        paths = [*paths[::2], "a\x00b", "link.txt", "linkdir/new.txt"]
    calls: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        calls += [
            ("read_file", {"path": path}),
            ("list_files", {"path": path}),
            ("search", {"pattern": "SECRET", "path": path}),
            ("edit_file", {"path": path, "old_string": "TOP", "new_string": "PWNED"}),
            ("write_file", {"path": path, "content": "PWNED"}),
            ("create_file", {"path": path, "content": "PWNED"}),
            ("delete_file", {"path": path}),
            ("rename_file", {"path": path, "new_path": "stolen.txt"}),
            ("rename_file", {"path": "inside.txt", "new_path": path}),
            ("run_command", {"command": "pwd", "cwd": path}),
        ]
    return calls


async def test_escaping_tool_calls_through_the_server_all_fail(tmp_path: Path) -> None:
    started = time.monotonic()
    root, outside = make_layout(tmp_path)
    before = snapshot(outside)
    calls = hostile_calls(outside)
    with FakeOpenAI() as fake:
        for start in range(0, len(calls), PER_REPLY):
            chunk = calls[start : start + PER_REPLY]
            fake.script(
                Reply(
                    tool_calls=[
                        tool_call(name, args, f"call_{start + i}")
                        for i, (name, args) in enumerate(chunk)
                    ]
                )
            )
        fake.script(text("done"))
        env = server_env(fake.base_url, tmp_path / "home")
        harness, _ = await start_harness(
            root=root, env=env, caps=capabilities(), init_options={"maxSteps": 100}
        )
        harness.autosave = True  # text edits land on disk at once, as resource operations do
        try:
            session_id, end = await harness.run("fuzz the tools")
            updates = harness.updates[session_id]
        finally:
            await stop_harness(harness)
    # Every edit call failed, so the done checks do not take "done" for an answer.
    assert end["stopReason"] == "failed", end
    assert end["message"].startswith("Not done: nothing was changed"), end
    final = {
        u["toolCallId"]: u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and "status" in u
    }
    assert len(final) == len(calls)
    for i, (name, args) in enumerate(calls):
        update = final[f"call_{i}"]
        assert update["status"] == "failed", (name, args, update)
    assert snapshot(outside) == before
    assert not Path("/tmp/cadenza-fuzz-escape.txt").exists()
    assert (root / "inside.txt").read_text() == "fine\nTOP\n"
    print(
        f"\ntool fuzz (server): {len(calls)} escaping calls, all failed, "
        f"{time.monotonic() - started:.1f} s"
    )
