"""Done means checked, through the real server: the workspace's tests run before done.

A scripted model (the fake OpenAI server) edits and claims done; the server runs the tests
through the permission gate (``cadenza/requestPermission``), shows the run as a tool call
and a ``check`` update, and sends failures back to the model.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.lsp.conftest import Connect
from tests.lsp.harness import Harness, capabilities
from tests.support.fake_openai import FakeOpenAI, call, text, tool_messages

SCRIPT = f"{sys.executable} -S test_calc.py"
TASK = "Make double() in calc.py return twice its argument."
WRONG = {"path": "calc.py", "old_string": "return x", "new_string": "return x + 1"}
FIX = {"path": "calc.py", "old_string": "return x + 1", "new_string": "return 2 * x"}
RIGHT = {"path": "calc.py", "old_string": "return x", "new_string": "return 2 * x"}
DONE = {"status": "done", "summary": "double fixed"}


def project(root: Path) -> None:
    (root / "calc.py").write_text("def double(x):\n    return x\n")
    (root / "test_calc.py").write_text(
        "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6, double(3)\n"
        "\n\nif __name__ == '__main__':\n    test_double()\n    print('1 passed')\n"
    )


def options(command: str | None = SCRIPT, timeout_s: float = 60.0) -> dict[str, Any]:
    checks: dict[str, Any] = {"testTimeoutS": timeout_s}
    if command is not None:
        checks["test"] = command
    return {"loop": {"checks": "all"}, "checks": checks}


async def connect_with(connect: Connect, **kwargs: Any) -> Harness:
    """An editor that saves the agent's edits (VS Code's ``cadenza.saveEdits``)."""
    editor = await connect(
        caps=capabilities(request_permission=True), user_config=options(**kwargs)
    )
    editor.autosave = True
    return editor


async def run_session(editor: Harness, task: str = TASK) -> tuple[str, dict[str, Any]]:
    """Start and wait generously: a test run is a process start (pytest: seconds when loaded)."""
    session_id = await editor.start(task)
    return session_id, await editor.wait_end(session_id, timeout=180.0)


def checks(editor: Harness, session_id: str) -> list[dict[str, Any]]:
    return [
        u
        for u in editor.updates[session_id]
        if u["sessionUpdate"] == "check" and u["name"] == "tests"
    ]


async def test_passing_tests_accept_done(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    """Auto-detected pytest (``test_*.py`` at the root), allowed once, passes."""
    project(workspace)
    editor = await connect(
        caps=capabilities(request_permission=True), user_config={"loop": {"checks": "all"}}
    )
    editor.autosave = True
    fake.script(call("edit_file", RIGHT, "e1"), call("complete", DONE, "d1"))
    session_id, end = await run_session(editor)
    assert end["stopReason"] == "end_turn", end["message"]
    assert end["message"] == "double fixed"
    [check] = checks(editor, session_id)
    assert check["status"] == "passed" and "1 passed" in check["detail"]
    [request] = editor.permission_requests
    assert request["toolCall"]["toolCallId"] == "check-tests"
    assert "pytest" in request["toolCall"]["rawInput"]["command"]
    assert "tests" in request["toolCall"]["title"]
    run = [u for u in editor.updates[session_id] if u.get("toolCallId") == "check-tests"]
    assert run[0]["sessionUpdate"] == "tool_call" and run[0]["kind"] == "execute"
    assert run[-1]["status"] == "completed"
    assert "check-tests" not in str(fake.requests)  # the check's run is not the model's call


async def test_failing_tests_refuse_done_then_the_fix_is_accepted(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    project(workspace)
    editor = await connect_with(connect)
    fake.script(
        call("edit_file", WRONG, "e1"),
        call("complete", DONE, "d1"),
        call("edit_file", FIX, "e2"),
        call("complete", DONE, "d2"),
    )
    session_id, end = await run_session(editor)
    assert end["stopReason"] == "end_turn"
    [refusal] = [m for m in tool_messages(fake.requests[2]) if m["tool_call_id"] == "d1"]
    assert refusal["content"].startswith("not accepted yet")
    assert "the tests fail" in refusal["content"] and "AssertionError: 4" in refusal["content"]
    assert [(c["status"], c["refused"]) for c in checks(editor, session_id)] == [
        ("failed", True),
        ("passed", False),
    ]
    assert (workspace / "calc.py").read_text() == "def double(x):\n    return 2 * x\n"


async def test_a_hosted_final_answer_is_checked_and_fails_after_the_refusals(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    project(workspace)
    editor = await connect_with(connect)
    fake.script(call("edit_file", WRONG, "e1"), text("done"), text("done"), text("done"))
    session_id, end = await run_session(editor)
    assert end["stopReason"] == "failed"
    assert end["message"].startswith("Not done: the tests fail")
    assert "AssertionError: 4" in end["message"]
    user = [m for m in fake.requests[2]["messages"] if m["role"] == "user"]
    assert "the tests fail" in user[-1]["content"]
    assert [c["refused"] for c in checks(editor, session_id)] == [True, True, False]


async def test_a_denied_test_run_is_skipped_and_said(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    project(workspace)
    editor = await connect_with(connect)
    editor.permission_option = "reject_once"
    fake.script(call("edit_file", WRONG, "e1"), call("complete", DONE, "d1"))
    session_id, end = await run_session(editor)
    assert end["stopReason"] == "end_turn"
    [check] = checks(editor, session_id)
    assert check["status"] == "skipped" and not check["refused"]
    assert "did not allow" in check["detail"]
    run = [u for u in editor.updates[session_id] if u.get("toolCallId") == "check-tests"]
    assert run[-1]["status"] == "failed"


async def test_a_hanging_test_command_is_bounded(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    project(workspace)
    marker = "sleep 61.25"  # unusual enough to find its processes
    editor = await connect_with(connect, command=f"{marker}; echo never", timeout_s=1.0)
    fake.script(
        call("edit_file", RIGHT, "e1"), *[call("complete", DONE, f"d{n}") for n in range(3)]
    )
    started = time.monotonic()
    session_id, end = await run_session(editor)
    assert end["stopReason"] == "failed"
    assert "did not finish within 1 s" in end["message"]
    assert [c["status"] for c in checks(editor, session_id)] == ["failed"] * 3
    assert time.monotonic() - started < 60  # three bounded runs, not three hangs
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, check=False)
    assert left.stdout == b""  # no orphan


async def test_unsaved_changes_skip_the_run_and_say_so(
    connect: Connect, fake: FakeOpenAI, workspace: Path
) -> None:
    """Edits an editor holds unsaved: the tests would judge the old code on disk."""
    project(workspace)
    editor = await connect_with(connect)
    editor.autosave = False
    fake.script(call("edit_file", RIGHT, "e1"), call("complete", DONE, "d1"))
    session_id, end = await run_session(editor)
    assert end["stopReason"] == "end_turn"
    [check] = checks(editor, session_id)
    assert check["status"] == "skipped" and "calc.py not saved" in check["detail"]
    assert editor.permission_requests == []  # nothing was run
