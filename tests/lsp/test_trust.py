"""Workspace trust over LSP, through a real server: the folder's ``cadenza.toml`` chooses the
model only once the person trusted the folder, asked once with ``window/showMessageRequest``
before the first session; a protected file is asked about every time, naming the file."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types

from cadenza.host.trust import DISTRUST, TRUST
from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.support.fake_openai import FakeOpenAI, call, text


def user_config(tmp_path: Path, body: str) -> None:
    folder = tmp_path / "home" / "xdg_config_home" / "cadenza"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cadenza.toml").write_text(body, encoding="utf-8")


def trust_file(tmp_path: Path) -> Path:
    return tmp_path / "home" / "xdg_state_home" / "cadenza" / "trust.json"


def warnings_of(harness: Harness) -> list[str]:
    return [m.message for m in harness.client.messages if m.type == types.MessageType.Warning]


async def eventually(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait until ``condition`` holds (a notification may follow the answer it came with)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.05)


def trust_questions(harness: Harness) -> list[types.ShowMessageRequestParams]:
    return [r for r in harness.message_requests if TRUST in [a.title for a in r.actions or []]]


async def test_trusting_the_folder_applies_its_model_and_records_it(
    connect: Connect, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    user_config(tmp_path, 'model = "openai/user-model"\n')
    (workspace / "cadenza.toml").write_text('model = "openai/ws-model"\n', encoding="utf-8")
    fake.script(text("one"), text("two"))
    first = await connect()
    first.message_choice = TRUST
    _, end = await first.run("hello", model=None)
    assert end["stopReason"] == "end_turn"
    [question] = trust_questions(first)
    assert "cadenza.toml" in question.message and 'model = "openai/ws-model"' in question.message
    assert fake.requests[0]["model"] == "ws-model"
    recorded = json.loads(trust_file(tmp_path).read_text(encoding="utf-8"))
    assert recorded["folders"] == {str(workspace.resolve()): "trusted"}
    # A later server in the same folder does not ask again.
    second = await connect()
    await second.run("again", model=None)
    assert trust_questions(second) == []
    assert fake.requests[1]["model"] == "ws-model"


async def test_an_untrusted_folder_keeps_the_persons_model_and_says_why(
    connect: Connect, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    user_config(tmp_path, 'model = "openai/user-model"\n')
    (workspace / "cadenza.toml").write_text(
        'model = "cli/claude"\n[checks]\ntest = "touch pwned"\n', encoding="utf-8"
    )
    fake.script(text("one"), text("two"), text("three"))
    dismissed = await connect()
    dismissed.message_choice = None  # the person closed the question
    await dismissed.run("hello", model=None)
    await dismissed.run("hello again", model=None)
    assert len(trust_questions(dismissed)) == 1  # asked once per server
    assert fake.requests[0]["model"] == "user-model"
    await eventually(lambda: any("not trusted" in w for w in warnings_of(dismissed)))
    [note] = [w for w in warnings_of(dismissed) if "not trusted" in w]
    assert "checks.test, model" in note and "cadenza trust" in note
    assert not trust_file(tmp_path).exists()  # a dismissal records nothing

    refusing = await connect()
    refusing.message_choice = DISTRUST
    await refusing.run("third", model=None)
    assert len(trust_questions(refusing)) == 1
    assert fake.requests[2]["model"] == "user-model"
    recorded = json.loads(trust_file(tmp_path).read_text(encoding="utf-8"))
    assert recorded["folders"] == {str(workspace.resolve()): "untrusted"}
    later = await connect()
    await eventually(lambda: any("not trusted" in w for w in warnings_of(later)))
    assert trust_questions(later) == []


async def test_a_protected_write_is_asked_every_time_with_the_once_options(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script(
        call(
            "create_file",
            {"path": ".vscode/settings.json", "content": '{"a": 1}\n'},
            "c1",
        ),
        call("create_file", {"path": ".VSCODE/tasks.json", "content": "{}\n"}, "c2"),
        text("done"),
    )
    harness = await connect(caps=capabilities(request_permission=True))
    harness.permission_option = "allow_always"  # not an option offered for a protected file
    await harness.run("configure the editor")
    protected = [r for r in harness.permission_requests if r.get("protectedPaths")]
    assert [r["protectedPaths"] for r in protected] == [
        [".vscode/settings.json"],
        [".VSCODE/tasks.json"],
    ]
    for request in protected:
        assert [o["kind"] for o in request["options"]] == ["allow_once", "reject_once"]
        assert request["toolCall"]["title"].startswith("creating the protected file ")
    # An "always" answer was not offered: the request counts as dismissed, nothing is written.
    assert not (workspace / ".vscode").exists() and not (workspace / ".VSCODE").exists()
    assert harness.edit_requests == []
    results = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert all("is a protected file" in r and "VS Code" in r for r in results)


async def test_the_fallback_prompt_names_the_protected_file(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    """A client without ``cadenza/requestPermission`` gets buttons: the once options only."""
    fake.script(
        call("create_file", {"path": "cadenza.toml", "content": 'model = "cli/x"\n'}, "c1"),
        text("done"),
    )
    harness = await connect()
    harness.permission_option = None  # dismissed
    await harness.run("configure cadenza")
    [asked] = [r for r in harness.message_requests if "protected file" in r.message]
    assert "cadenza.toml" in asked.message and "Cadenza's settings" in asked.message
    assert [a.title for a in asked.actions or []] == ["Allow once", "Reject"]
    assert not (workspace / "cadenza.toml").exists()
    result = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert "cadenza.toml was not changed: it is a protected file" in result["content"]
