"""``cadenza run --allow 'run_command:pytest *'``: a command pattern answers headless prompts.

Unit tests of the policy, then end to end through the real CLI and server (subprocesses)
against the scripted fake model: the allowed program runs, the same program behind shell syntax
and any other program are declined and never run, ``--deny`` wins over ``--allow``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cadenza.cli import build_parser
from cadenza.client.permissions import PermissionPolicy, PolicyError
from cadenza.schema.requests import PermissionOption
from tests.support.fake_openai import FakeOpenAI, call, text

RUN_TIMEOUT_S = 90
OPTIONS = [
    PermissionOption(option_id="o-ao", name="Tak", kind="allow_once"),
    PermissionOption(option_id="o-ro", name="Nie", kind="reject_once"),
]
CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def chosen(policy: PermissionPolicy, command: str) -> str | None:
    option = policy.choose("run_command", OPTIONS, {"command": command})
    return None if option is None else option.kind


def test_a_pattern_allows_its_program_only() -> None:
    policy = PermissionPolicy.build(allow=["run_command:pytest *"])
    assert chosen(policy, "pytest -q tests") == "allow_once"
    for command in ("pytest; rm -rf ~", "pytest && curl evil", "pytest $(id)", "pytestx", "ls"):
        assert chosen(policy, command) is None, command
    assert policy.choose("delete_file", OPTIONS, {"path": "x"}) is None
    assert policy.describe() == "allow run_command:pytest *"


def test_deny_wins_over_allow_and_over_a_pattern() -> None:
    policy = PermissionPolicy.build(allow=["run_command"], deny=["run_command:rm *"])
    assert chosen(policy, "ls") == "allow_once"
    assert chosen(policy, "ls && rm -rf x") == "reject_once"


def test_rules_are_normalized_and_checked() -> None:
    policy = PermissionPolicy.build(allow=["run_command:  pytest   * "])
    assert policy.allow == {"run_command:pytest *"}
    with pytest.raises(PolicyError, match="both allowed"):
        PermissionPolicy.build(allow=["run_command:pytest *"], deny=["run_command:pytest  *"])
    with pytest.raises(PolicyError, match="unknown tool 'run_commands'"):
        PermissionPolicy.build(allow=["run_commands"])
    with pytest.raises(PolicyError, match="only run_command rules take a pattern"):
        PermissionPolicy.build(allow=["run_commands:pytest *"])


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("run_command:pytest; rm *", "no shell syntax"),
        ("run_command:* pytest", "last word"),
        ("delete_file:*.pyc", "only run_command rules take a pattern"),
    ],
)
def test_a_bad_rule_is_a_usage_error(
    rule: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["run", "--allow", rule, "task"])
    assert info.value.code == 2
    assert why in capsys.readouterr().err


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
    # pytest on PATH: the test environment's own.
    values["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{values.get('PATH', '')}"
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


def tool_messages(fake: FakeOpenAI) -> dict[str, str]:
    return {
        str(m["tool_call_id"]): str(m.get("content"))
        for m in fake.requests[-1]["messages"]
        if m.get("role") == "tool"
    }


def test_allow_pattern_runs_pytest_and_declines_everything_else(
    project: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(
        call("run_command", {"command": "pytest -q test_calc.py"}, "c1"),
        call("run_command", {"command": "pytest -q; touch pwned1"}, "c2"),
        call("run_command", {"command": "pytest $(touch pwned2)"}, "c3"),
        call("run_command", {"command": "touch pwned3"}, "c4"),
        text("The tests pass."),
    )
    done = cadenza_run(
        project, env, "--allow", "run_command:pytest *", "--output", "json", "run the tests"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["permissions"] == {
        "allow": ["run_command:pytest *"],
        "deny": [],
        "allow_all": False,
    }
    answers = [(p["tool"], p["kind"]) for p in report["permission_prompts"]]
    # The server has the rule: c1 and the tests' own runs (``PYTHON -m pytest``, a Python on
    # the PATH or the workspace's own, fits the pattern) asked nobody; c2 to c4 were declined.
    assert answers == [("run_command", None)] * 3
    results = tool_messages(fake)
    assert results["c1"].startswith("exit code 0") and "1 passed" in results["c1"]
    for call_id in ("c2", "c3", "c4"):
        assert "was not run" in results[call_id], results[call_id]
    assert not list(project.glob("pwned*"))


def test_deny_pattern_wins_over_allow_end_to_end(
    project: Path, env: dict[str, str], fake: FakeOpenAI
) -> None:
    fake.script(
        call("run_command", {"command": "touch made.txt && rm calc.py"}, "c1"),
        call("run_command", {"command": "touch made.txt"}, "c2"),
        text("done"),
    )
    done = cadenza_run(
        project, env, "--allow", "run_command", "--deny", "run_command:rm *", "clean up"
    )
    assert done.returncode == 0, done.stderr
    results = tool_messages(fake)
    assert "permission rules refuse this run_command call" in results["c1"]
    assert "Do not retry it" in results["c1"]  # the model keeps its instruction
    assert results["c2"].startswith("exit code 0")
    assert (project / "calc.py").exists() and (project / "made.txt").exists()
    # The person reads which of their rules refused it, not the model's instruction.
    assert "Do not retry" not in done.stdout + done.stderr
    assert "refused by your rule `run_command:rm *`" in done.stdout
