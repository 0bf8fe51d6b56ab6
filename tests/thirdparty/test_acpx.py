"""acpx (a third-party headless ACP client) drives ``cadenza acp`` against a scripted model.

acpx spawns ``cadenza acp`` itself and answers its ``fs/*``, ``terminal/*`` and
``session/request_permission`` requests; the model is the scripted OpenAI-compatible server in
its own process. acpx keeps files on disk (it has no unsaved buffers, so reads see the disk).
``--approve-all`` approves every request; its default (no terminal to ask on) denies writes and
permission prompts, and exits 5.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import Reply, assert_tool_calls_answered, call, text
from tests.thirdparty import acpx as ax
from tests.thirdparty.scripted_model import ScriptedModel

pytestmark = pytest.mark.skipif(ax.missing() is not None, reason=ax.missing() or "")

WAIT_S = 20.0


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def client(tmp_path: Path, workspace: Path, model: ScriptedModel) -> ax.Acpx:
    return ax.Acpx(workspace=workspace, home=tmp_path / "home", model_url=model.base_url)


def assert_json_rpc(messages: list[dict[str, Any]]) -> None:
    """Every line is a JSON-RPC 2.0 message, and every request has exactly one response."""
    assert messages, "acpx printed nothing"
    for message in messages:
        assert message["jsonrpc"] == "2.0"
        assert "method" in message or "result" in message or "error" in message, message
    requests = [m for m in messages if "method" in m and "id" in m]
    for request in requests:
        ax.response_to(messages, request)


@pytest.fixture(scope="module")
def create_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ax.Run, Path]]:
    """One ``exec --approve-all --format json`` that creates a file (two tests read it)."""
    tmp_path = tmp_path_factory.mktemp("acpx-create")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [call("create_file", {"path": "hello.py", "content": "print('hi')\n"}, "c1")]
    with ScriptedModel(tmp_path / "model", [*script, text("created hello.py")]) as model:
        acpx = client(tmp_path, workspace, model)
        began = time.monotonic()
        run = acpx.run("--approve-all", "--format", "json", "exec", "create hello.py")
        print(f"acpx exec create: {time.monotonic() - began:.1f} s")
        assert_tool_calls_answered(model.requests()[-1])
        yield run, workspace


def test_exec_creates_a_file_and_json_output_is_structured(
    create_run: tuple[ax.Run, Path],
) -> None:
    run, workspace = create_run
    assert run.code == 0, run.stderr
    assert (workspace / "hello.py").read_text() == "print('hi')\n"
    messages = run.messages()
    assert_json_rpc(messages)
    methods = [
        m.get("method") for m in messages if m.get("method", "session/update") != "session/update"
    ]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    [initialize] = ax.requests(messages, "initialize")
    assert ax.response_to(messages, initialize)["result"]["agentInfo"]["name"] == "cadenza"
    [write] = ax.requests(messages, "fs/write_text_file")
    assert write["params"]["path"] == str(workspace / "hello.py")
    assert write["params"]["content"] == "print('hi')\n"
    assert ax.response_to(messages, write)["result"] == {}
    # The session's slash commands are announced when it is created.
    assert ax.kinds(messages)[0] == "available_commands_update"
    kinds = [kind for kind in ax.kinds(messages) if kind != "available_commands_update"]
    assert kinds[0] == "tool_call"
    assert "agent_message_chunk" in kinds
    assert kinds[-1] == "usage_update"
    calls = [u for u in ax.updates(messages) if u.get("toolCallId") == "c1"]
    assert calls[0]["kind"] == "edit"
    assert calls[-1]["status"] == "completed"
    assert any(c.get("type") == "diff" for c in calls[-1]["content"])
    [prompt] = ax.requests(messages, "session/prompt")
    assert ax.response_to(messages, prompt)["result"] == {"stopReason": "end_turn"}


# The ordering rule (``acp/ordered.py``): every fs/terminal/permission request leaves after the
# tool_call update that announces its call (without it, acpx showed fs/write_text_file first).
def test_fs_request_comes_after_its_tool_call_update(create_run: tuple[ax.Run, Path]) -> None:
    run, _ = create_run
    messages = run.messages()
    announced = next(
        i
        for i, m in enumerate(messages)
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call"
    )
    written = next(i for i, m in enumerate(messages) if m.get("method") == "fs/write_text_file")
    assert announced < written


def test_session_read_edit_follow_up_list_and_load(tmp_path: Path, workspace: Path) -> None:
    """A persistent session: read, edit, a second prompt with the same history, the agent's
    session list, and ``session/load`` when acpx restarts the agent after its owner's TTL."""
    (workspace / "a.txt").write_text("alpha\n")
    script = [
        call("read_file", {"path": "a.txt"}, "r1"),
        text("it says alpha"),
        call("edit_file", {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}, "e1"),
        text("now beta"),
        text("third turn after a restart"),
    ]
    with ScriptedModel(tmp_path / "model", script) as model:
        acpx = client(tmp_path, workspace, model)
        created = acpx.run("sessions", "new")
        assert created.code == 0, created.stderr
        first = acpx.run("--approve-all", "--format", "json", "prompt", "what is in a.txt?")
        assert first.code == 0, first.stderr
        messages = first.messages()
        assert_json_rpc(messages)
        [read] = ax.requests(messages, "fs/read_text_file")
        assert read["params"]["path"] == str(workspace / "a.txt")
        done = [u for u in ax.updates(messages) if u.get("toolCallId") == "r1"][-1]
        assert done["status"] == "completed"
        assert "alpha" in done["content"][0]["content"]["text"]
        session_id = ax.requests(messages, "session/prompt")[0]["params"]["sessionId"]

        second = acpx.run("--approve-all", "--format", "json", "prompt", "make it beta")
        assert second.code == 0, second.stderr
        assert (workspace / "a.txt").read_text() == "beta\n"
        [prompt] = ax.requests(second.messages(), "session/prompt")
        assert prompt["params"]["sessionId"] == session_id  # the same session, no new one
        requests = model.requests()
        assert len(requests) == 4
        said = [m.get("content") for m in requests[2]["messages"]]
        assert "it says alpha" in said  # the second turn carries the first one's history
        assert_tool_calls_answered(requests[3])

        listed = acpx.run("sessions", "list")
        assert listed.code == 0, listed.stderr
        rows = [line.split("\t") for line in listed.stdout.splitlines() if line.strip()]
        row = next(r for r in rows if r[0] == session_id)
        assert row[1] == "what is in a.txt?" and row[2] == str(workspace)

        time.sleep(float(ax.OWNER_TTL_S) + 2)  # the owner stops the agent; the next prompt loads
        third = acpx.run("--format", "json", "prompt", "again")
        assert third.code == 0, third.stderr
        journal = acpx.journal()
        loads = ax.requests(journal, "session/load")
        assert any(m["params"]["sessionId"] == session_id for m in loads), loads
        load = next(m for m in loads if m["params"]["sessionId"] == session_id)
        assert "result" in ax.response_to(journal, load)
        last = model.requests()[-1]
        assert "now beta" in [m.get("content") for m in last["messages"]]  # history restored
        acpx.run("sessions", "close")


def test_default_mode_denies_a_write(tmp_path: Path, workspace: Path) -> None:
    """Without ``--approve-all`` acpx denies ``fs/write_text_file``: nothing changes, the tool
    fails visibly, and acpx exits 5 (permission denied)."""
    (workspace / "a.txt").write_text("alpha\n")
    script = [
        call("edit_file", {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}, "e1"),
        text("tried"),
    ]
    with ScriptedModel(tmp_path / "model", script) as model:
        run = client(tmp_path, workspace, model).run("--format", "json", "exec", "edit a.txt")
        assert run.code == 5, (run.code, run.stderr)
        assert (workspace / "a.txt").read_text() == "alpha\n"
        messages = run.messages()
        [write] = ax.requests(messages, "fs/write_text_file")
        assert "error" in ax.response_to(messages, write)
        failed = [u for u in ax.updates(messages) if u.get("toolCallId") == "e1"][-1]
        assert failed["status"] == "failed"
        tool_message = next(m for m in model.requests()[-1]["messages"] if m["role"] == "tool")
        assert "nothing was written" in tool_message["content"]
        # acpx says why in the error's data; the model is told (not only "Internal error").
        assert "Permission denied for fs/write_text_file" in tool_message["content"]


@pytest.mark.parametrize(("approve", "ran"), [(True, True), (False, False)])
def test_run_command_permission(tmp_path: Path, workspace: Path, approve: bool, ran: bool) -> None:
    """``run_command`` asks ``session/request_permission``: approved it runs in acpx's
    terminal; denied (acpx's default) it does not run and the model is told."""
    script = [call("run_command", {"command": "echo ran > out.txt"}, "c1"), text("finished")]
    with ScriptedModel(tmp_path / "model", script) as model:
        flags = ["--approve-all"] if approve else []
        run = client(tmp_path, workspace, model).run(*flags, "--format", "json", "exec", "run")
        assert run.code == (0 if ran else 5), (run.code, run.stderr)
        messages = run.messages()
        assert_json_rpc(messages)
        [asked] = ax.requests(messages, "session/request_permission")
        assert asked["params"]["toolCall"]["toolCallId"] == "c1"
        options = {o["kind"] for o in asked["params"]["options"]}
        assert {"allow_once", "reject_once"} <= options
        outcome = ax.response_to(messages, asked)["result"]["outcome"]
        assert (outcome.get("optionId", "").startswith("allow")) == ran
        assert (workspace / "out.txt").exists() == ran
        statuses = [u.get("status") for u in ax.updates(messages) if u.get("toolCallId") == "c1"]
        assert statuses[-1] == ("completed" if ran else "failed")
        if ran:
            assert ax.requests(messages, "terminal/create"), "acpx's terminal ran the command"
        else:
            tool = next(m for m in model.requests()[-1]["messages"] if m["role"] == "tool")
            assert "rejected" in tool["content"]


def test_cancel_a_long_run_command(tmp_path: Path, workspace: Path) -> None:
    """``acpx cancel`` from another process stops a prompt whose command sleeps for a minute."""
    started = workspace / "started.txt"
    script = [
        call("run_command", {"command": "echo $$ > started.txt; exec sleep 60"}, "c1"),
        Reply(content="never asked for"),
    ]
    with ScriptedModel(tmp_path / "model", script) as model:
        acpx = client(tmp_path, workspace, model)
        assert acpx.run("sessions", "new").code == 0
        prompt = acpx.start("--approve-all", "--format", "json", "prompt", "sleep")
        try:
            deadline = time.monotonic() + ax.RUN_S
            while not started.exists() or not started.read_text().strip():
                assert prompt.poll() is None, prompt.communicate()
                assert time.monotonic() < deadline, "the command did not start"
                time.sleep(0.1)
            began = time.monotonic()
            cancelled = acpx.run("cancel")
            assert cancelled.code == 0, cancelled.stderr
            stdout, stderr = prompt.communicate(timeout=WAIT_S)
            took = time.monotonic() - began
        finally:
            if prompt.poll() is None:
                prompt.kill()
                prompt.communicate()
        print(f"acpx cancel: the prompt ended {took:.1f} s after `acpx cancel` started")
        assert took < WAIT_S
        messages = ax.Run(code=prompt.returncode, stdout=stdout, stderr=stderr).messages()
        [request] = ax.requests(messages, "session/prompt")
        assert ax.response_to(messages, request)["result"] == {"stopReason": "cancelled"}, stdout
        assert any(m.get("method") == "session/cancel" for m in acpx.journal())
        statuses = [u.get("status") for u in ax.updates(messages) if u.get("toolCallId") == "c1"]
        assert statuses[-1] == "failed"
        assert len(model.requests()) == 1  # nothing after the cancel
        acpx.run("sessions", "close")


def test_a_new_session_is_loaded_by_its_first_prompt(tmp_path: Path, workspace: Path) -> None:
    """Found by acpx: ``acpx sessions new`` creates the session and lets the agent go; the next
    prompt starts ``cadenza acp`` again and sends ``session/load``. A session is remembered
    from ``session/new`` on (``acp/unprompted.py``), so the load finds it and the prompt goes
    to that session (before, acpx quietly made another one)."""
    with ScriptedModel(tmp_path / "model", [text("hello")]) as model:
        acpx = client(tmp_path, workspace, model)
        created = acpx.run("sessions", "new")
        assert created.code == 0, created.stderr
        session_id = created.stdout.strip()
        prompt = acpx.run("--format", "json", "prompt", "hi")
        acpx.run("sessions", "close")
        assert prompt.code == 0, prompt.stderr
        [sent] = ax.requests(prompt.messages(), "session/prompt")
        assert sent["params"]["sessionId"] == session_id
