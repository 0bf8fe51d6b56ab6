"""``cadenza run --allow/--deny/--allow-all`` and ``--output json``.

End to end through the real CLI and server (subprocesses) against the scripted fake model: with
``--allow run_command`` the model runs a tiny project's tests (``python -m unittest``) and the
JSON report shows the allowed prompt, the fix's diff and the usage; without it the call is
declined and never runs.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cadenza.cli import build_parser
from cadenza.client.permissions import (
    ALLOW_ONCE,
    GATED_TOOLS,
    KNOWN_TOOLS,
    REJECT_ONCE,
    PermissionPolicy,
    PolicyError,
)
from cadenza.client.prompts import DecliningPrompter, TerminalPrompter
from cadenza.engine.permissions import DEFAULT_GATED, OPTION_NAMES, PermissionRequest
from cadenza.lsp.prompts import fallback_permission_message
from cadenza.tools.registry import default_tools
from tests.support.fake_openai import FakeOpenAI, call, text

RUN_TIMEOUT_S = 90
CALC = "def add(a, b):\n    return a - b\n"
TEST_CALC = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class AddTest(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
TESTS = f"{sys.executable} -m unittest -v test_calc"


# -- the policy ------------------------------------------------------------------------------


def test_known_tools_are_the_servers_default_tools_and_gated_ones() -> None:
    assert set(GATED_TOOLS) == set(DEFAULT_GATED)
    assert set(default_tools().names) == KNOWN_TOOLS


def test_the_policy_answers_the_servers_own_prompt_text() -> None:
    request = PermissionRequest(
        tool_call_id="c1", name="run_command", title="running", kind="execute", raw_input="{}"
    )
    message = fallback_permission_message(request)
    actions = list(OPTION_NAMES.values())
    assert PermissionPolicy.build(allow=["run_command"]).choose(message, actions) == ALLOW_ONCE
    assert PermissionPolicy.build(deny=["run_command"]).choose(message, actions) == REJECT_ONCE
    assert PermissionPolicy.build(allow_all=True).choose(message, actions) == ALLOW_ONCE
    assert PermissionPolicy.build(allow=["delete_file"]).choose(message, actions) is None
    assert PermissionPolicy().choose("Apply the change?", actions) is None


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"allow": ["rm_rf"]}, "unknown tool 'rm_rf'"),
        ({"allow": ["run_command"], "deny": ["run_command"]}, "both allowed"),
        ({"allow_all": True, "deny": ["delete_file"]}, "--allow-all allows every tool"),
    ],
)
def test_bad_policies_are_refused(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(PolicyError, match=words):
        PermissionPolicy.build(**kwargs)


async def test_prompters_answer_from_the_policy_before_asking() -> None:
    message = "Cadenza wants to call run_command with {}"
    actions = list(OPTION_NAMES.values())
    policy = PermissionPolicy.build(allow=["run_command"], deny=["delete_file"])
    # The terminal prompter would block on stdin if it asked: the policy answers first.
    terminal = TerminalPrompter(Console(file=io.StringIO()), permissions=policy)
    assert await terminal.choose(message, actions) == ALLOW_ONCE
    deleting = "Cadenza wants to call delete_file with {}"
    assert await terminal.choose(deleting, actions) == REJECT_ONCE
    declining = DecliningPrompter(permissions=policy)
    assert await declining.choose(message, actions) == ALLOW_ONCE
    assert (
        await declining.choose("Cadenza wants to call browse_interactive with {}", actions) is None
    )


def test_unknown_tool_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["run", "--allow", "run_commands", "task"])
    assert info.value.code == 2
    assert "unknown tool 'run_commands'" in capsys.readouterr().err


def test_allow_all_is_named_dangerous_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    assert "DANGEROUS" in capsys.readouterr().out


# -- end to end ------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text(CALC, encoding="utf-8")
    (root / "test_calc.py").write_text(TEST_CALC, encoding="utf-8")
    return root


@pytest.fixture
def env(tmp_path: Path, fake: FakeOpenAI) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith(("CADENZA_", "XDG_"))}
    values.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="x", NO_COLOR="1")
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        values[name] = str(folder)
    return values


def cadenza_run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cadenza", "run", "--workspace", str(project)]
    return subprocess.run(
        [*command, "--model", "openai/test", *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def script_fix_and_test(fake: FakeOpenAI) -> None:
    fake.script(
        call("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}, "c1"),
        call("run_command", {"command": TESTS}, "c2"),
        text("Fixed add; the tests pass."),
    )


def tool_message(fake: FakeOpenAI, call_id: str) -> str:
    for message in fake.requests[-1]["messages"]:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return str(message.get("content"))
    raise AssertionError(f"no tool message for {call_id}")


def test_allow_run_command_runs_the_tests_and_json_reports_it(
    project: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    script_fix_and_test(fake)
    done = cadenza_run(project, env, "--allow", "run_command", "--output", "json", "fix add")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # stdout is the one JSON object and nothing else
    assert done.stdout.count("\n") == 1
    assert report["stop_reason"] == "end_turn"
    assert report["exit_status"] == 0
    assert report["session_id"]
    assert report["permissions"] == {"allow": ["run_command"], "deny": [], "allow_all": False}
    assert report["permission_prompts"] == [{"tool": "run_command", "answer": ALLOW_ONCE}]
    assert report["usage"]["requests"] == 3
    assert report["usage"]["total_tokens"] == 45
    assert report["wall_time_s"] > 0
    [change] = report["files"]
    assert change["path"] == "calc.py"
    assert "-    return a - b\n+    return a + b\n" in change["diff"]
    ran = tool_message(fake, "c2")
    assert "exit code 0" in ran and "test_add" in ran and "OK" in ran
    assert "permissions: allow run_command" in done.stderr  # the header


def test_without_allow_the_command_is_declined(
    project: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    script_fix_and_test(fake)
    done = cadenza_run(project, env, "--output", "json", "fix add")
    report = json.loads(done.stdout)
    assert report["permission_prompts"] == [{"tool": "run_command", "answer": None}]
    assert "was not run" in tool_message(fake, "c2")


def test_deny_rejects_without_asking_and_the_header_says_so(
    project: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    script_fix_and_test(fake)
    done = cadenza_run(project, env, "--deny", "run_command", "fix add")
    assert done.returncode == 0, done.stderr
    assert "permissions: deny run_command" in done.stdout.splitlines()[0]
    assert "rejected this run_command call" in tool_message(fake, "c2")


def test_contradictory_flags_exit_2_before_starting(project: Path, env: dict[str, str]) -> None:
    done = cadenza_run(project, env, "--allow-all", "--deny", "run_command", "task")
    assert done.returncode == 2
    assert "--allow-all allows every tool" in done.stderr
    assert done.stdout == ""


def test_json_output_of_a_server_that_cannot_start(project: Path, env: dict[str, str]) -> None:
    done = cadenza_run(project, env, "--model", "nosuch/model", "--output", "json", "task")
    report = json.loads(done.stdout)
    assert done.returncode == report["exit_status"] == 1
    assert report["stop_reason"] == "error"
    assert report["error"] or report["message"]
