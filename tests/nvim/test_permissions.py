""":CadenzaPermissions in real headless Neovim against the real ``cadenza serve``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.nvim.harness import run_scenario
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages


def test_always_allow_the_pattern_then_revoke_it(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / "Makefile").write_text("%.txt:\n\ttouch $@\n")  # make: a pattern is offered
    fake.script(
        call("run_command", {"command": "make marker.txt"}, "c1"),
        text("made it"),
        call("run_command", {"command": "make again.txt"}, "c2"),
        text("made another"),
    )
    outcome = run_scenario("permissions", workspace=workspace, env=env)
    assert outcome.ok, outcome.report()

    assert (workspace / "marker.txt").exists() and (workspace / "again.txt").exists()
    [second] = tool_messages(fake.requests[3])
    assert second["content"].startswith("exit code 0")
    # The answer lived in the person's state, never in the workspace; it is gone now.
    [stored] = (tmp_path / "home").rglob("permissions/*.json")
    assert json.loads(stored.read_text())["allow"] == []
    assert not list(workspace.rglob("*.json"))
