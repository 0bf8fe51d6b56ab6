"""The Neovim plugin in real headless Neovim 0.11 against the real ``cadenza serve``.

Each test scripts the fake OpenAI model (``tests.support.fake_openai``), runs one Lua scenario
from ``scenarios/`` (which asserts what Neovim shows and ends with ``qall!`` or ``cquit 1``),
then asserts what the model was sent and what is on disk.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.nvim.harness import Outcome, isolated_env, run_scenario
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    assert_tool_calls_answered,
    call,
    is_workspace,
    text,
    tool_messages,
)

APP = "def greet():\n    return 'hi'\n"


def passed(outcome: Outcome) -> None:
    assert outcome.ok, outcome.report()


def user_task(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return str(next(m["content"] for m in messages if m["role"] == "user" and not is_workspace(m)))


def user_texts(request: dict[str, object]) -> list[str]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [str(m["content"]) for m in messages if m["role"] == "user" and not is_workspace(m)]


def needs_input(missing: str, why: str) -> dict[str, str]:
    """``complete``'s arguments that stop the run with ``needs_user_input``."""
    return {
        "status": "needs_user_input",
        "summary": "",
        "missing_info": missing,
        "why_no_default": why,
    }


def edit(path: str, old: str, new: str, call_id: str) -> Reply:
    return call("edit_file", {"path": path, "old_string": old, "new_string": new}, call_id)


def test_run_edits_the_unsaved_buffer_then_write(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "app.py").write_text(APP)
    fake.script(
        edit("app.py", "print(greet())", "print(greet().upper())", "c1"),
        text("It now prints GREETING."),
    )
    passed(run_scenario("edit_modified_buffer", workspace=workspace, env=env))

    # The range went into the task with the file and line numbers; the line exists only in
    # the unsaved buffer, so the edit succeeded on the buffer's text.
    assert user_task(fake.requests[0]) == (
        "Print the greeting in upper case\n\nSelected lines 3-3 of app.py:\n"
        "```python\nprint(greet())\n```"
    )
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == "edited app.py: 1 replacement(s)"
    assert (workspace / "app.py").read_text() == APP + "print(greet().upper())\n"


def test_u_undoes_the_agents_edit(fake: FakeOpenAI, workspace: Path, env: dict[str, str]) -> None:
    (workspace / "app.py").write_text(APP)
    fake.script(edit("app.py", "'hi'", "'hello'", "c1"), text("Greet now says hello."))
    passed(run_scenario("undo", workspace=workspace, env=env))
    assert (workspace / "app.py").read_text() == APP


def test_ask_user_is_answered_through_vim_ui_input(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    fake.script(
        call("ask_user", {"question": "Which colour should the button be?"}, "c1"),
        text("Painting it blue."),
    )
    passed(run_scenario("ask_user", workspace=workspace, env=env))
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"] == "The person answered: blue"


def test_cancel_mid_session(fake: FakeOpenAI, workspace: Path, env: dict[str, str]) -> None:
    fake.script(Reply(content="too late", delay_s=30))
    outcome = run_scenario("cancel", workspace=workspace, env=env)
    passed(outcome)
    assert len(fake.requests) == 1
    print(outcome.output)


def test_error_end_is_one_clean_notify(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    """A provider 401 ends the session: one vim.notify, no autocommand traceback."""
    fake.script(Reply(status=401))
    outcome = run_scenario("error_end", workspace=workspace, env=env)
    passed(outcome)
    assert "LspProgress Autocommands" not in outcome.output


def test_checkhealth(workspace: Path, env: dict[str, str]) -> None:
    passed(run_scenario("checkhealth", workspace=workspace, env=env))


def test_undo_then_sessions_lists_and_replays(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    fake.script(text("Hello!"))
    passed(run_scenario("undo_and_sessions", workspace=workspace, env=env))
    assert len(fake.requests) == 1  # the replay asked the model nothing


def test_needs_user_input_waits_then_resumes_on_the_prompt_and_on_cadenza_reply(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    first = "the name of the new function"
    second = "the module to put it in"
    fake.script(
        call("complete", needs_input(first, "two names fit equally well"), "c1"),
        call("complete", needs_input(second, "utils and helpers both exist"), "c2"),
        text("Renamed to compute_total in utils."),
    )
    passed(run_scenario("needs_input", workspace=workspace, env=env))

    # One conversation: each answer is a new user message after the answered complete call.
    assert len(fake.requests) == 3
    assert user_texts(fake.requests[1])[0] == "Rename the function"
    assert user_texts(fake.requests[1])[-1] == (
        f"The person answered your question ({first}): compute_total"
    )
    assert user_texts(fake.requests[2])[-1] == (
        f"The person answered your question ({second}): utils"
    )
    assert_tool_calls_answered(fake.requests[2])


def test_permission_allow_once_runs_the_gated_command(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    fake.script(call("run_command", {"command": "touch marker.txt"}, "c1"), text("made it"))
    passed(run_scenario("permission", workspace=workspace, env=env))
    assert (workspace / "marker.txt").exists()
    [tool] = tool_messages(fake.requests[1])
    assert tool["content"].startswith("exit code 0")


def test_what_a_command_changed_that_the_review_cannot_list_is_said(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    command = "printf 'x\\000y' > data.bin"
    fake.script(call("run_command", {"command": command}, "c1"), text("wrote it"))
    passed(run_scenario("command_unlisted", workspace=workspace, env=env))
    assert (workspace / "data.bin").read_bytes() == b"x\x00y"


def test_cadenza_undo_puts_the_buffer_back(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "app.py").write_text(APP)
    fake.script(edit("app.py", "'hi'", "'hello'", "c1"), text("Greet now says hello."))
    passed(run_scenario("undo_session", workspace=workspace, env=env))
    assert (workspace / "app.py").read_text() == APP


def test_unit_prompt_and_edit_handlers(workspace: Path, env: dict[str, str]) -> None:
    """Lua unit tests, no server: permission (rejected, dismissed), askUser, waitingHuman
    (``opened``, dismissed), waiting and resumed session states, capabilities, stale edits,
    setup validation."""
    passed(run_scenario("unit_handlers", workspace=workspace, env=env))


@pytest.fixture
def smollm2() -> Path:
    """The pulled SmolLM2-135M (scripts/test.sh pulls it), or a skip."""
    from cadenza.providers.llama_command import LlamaServerError, find_binary
    from cadenza.providers.models import model_path

    try:
        find_binary()
    except LlamaServerError as exc:
        pytest.skip(str(exc))
    path = model_path("smollm2-135m")
    if path is None:
        pytest.skip("smollm2-135m is not pulled (cadenza models pull smollm2-135m)")
    return path


@pytest.mark.e2e
def test_real_local_model(smollm2: Path, workspace: Path, tmp_path: Path) -> None:
    """Structural only: the progress ended and a session_end arrived."""
    (workspace / "app.py").write_text(APP)
    env = isolated_env(
        tmp_path / "home-local",
        CADENZA_TEST_MODEL="local/smollm2-135m",
        CADENZA_MODELS_DIR=str(smollm2.parent),
    )
    # A babbling small model is cut after 256 tokens (not 1,024): short steps on loaded cores.
    user_config = Path(env["XDG_CONFIG_HOME"]) / "cadenza"
    user_config.mkdir(parents=True, exist_ok=True)
    # No repair (which would ask again with twice the tokens): the person's own setting, as
    # initializationOptions may not set [loop] in a folder that is not trusted.
    (user_config / "cadenza.toml").write_text("maxTokens = 256\n[loop]\nrepair = false\n")
    # Bounded by work (one request of at most 32 tokens, in the scenario); waited for
    # generously: the scenario's own wait is 20 minutes.
    outcome = run_scenario("local_model", workspace=workspace, env=env, timeout=1380)
    passed(outcome)
    print(outcome.output, file=sys.stderr)


def test_code_intelligence_from_neovims_language_server(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> None:
    """The code-intelligence tools answered by Neovim's own language server (ty, as installed)."""
    ty = Path(sys.executable).parent / "ty"
    assert ty.exists(), f"{ty} is missing: install Cadenza (pip install -e .), which pins ty"
    files = {
        "total.py": "def calc_total(items):\n    return sum(items)\n",
        "report.py": "from total import calc_total\n\nprint(calc_total([1, 2]))\n",
        "shop.py": 's = "é😀"; from total import calc_total\n\nPRICE = calc_total([3])\n',
        "broken.py": 'count: int = "many"\n',
    }
    for name, source in files.items():
        (workspace / name).write_text(source)
    fake.script(
        call("find_references", {"path": "shop.py", "line": 1, "symbol": "calc_total"}, "f1"),
        call("go_to_definition", {"path": "report.py", "line": 3, "symbol": "calc_total"}, "g1"),
        call(
            "rename_symbol",
            {"path": "total.py", "line": 1, "symbol": "calc_total", "new_name": "compute_total"},
            "r1",
        ),
        call("diagnostics", {"path": "broken.py"}, "d1"),
        text("Renamed calc_total to compute_total."),
    )
    env = {**env, "CADENZA_TEST_TY": str(ty)}
    passed(run_scenario("code_intel", workspace=workspace, env=env, timeout=180))

    for name in ("total.py", "report.py", "shop.py"):
        expected = files[name].replace("calc_total", "compute_total")
        assert (workspace / name).read_text() == expected
    found = {m["tool_call_id"]: str(m["content"]) for r in fake.requests for m in tool_messages(r)}
    for where in ("total.py:1", "report.py:1", "report.py:3", "shop.py:1", "shop.py:3"):
        assert where in found["f1"], found["f1"]
    assert "total.py:1" in found["g1"] and "report.py" not in found["g1"], found["g1"]
    assert "broken.py:1" in found["d1"] and "not assignable" in found["d1"], found["d1"]
    assert_tool_calls_answered(fake.requests[-1])
