"""The permission gate with rules: deny wins, patterns, the pattern answer, list and revoke."""

from __future__ import annotations

import json
from pathlib import Path

from cadenza.engine.permissions import (
    PermissionAnswer,
    PermissionGate,
    PermissionRequest,
    PermissionStore,
    StoredRule,
)
from cadenza.messages import ToolCall
from cadenza.permission_rules import RuleSet


class Asker:
    """Answers every prompt with ``answer`` and keeps the requests."""

    def __init__(self, answer: PermissionAnswer) -> None:
        self.answer = answer
        self.asked: list[PermissionRequest] = []

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        return self.answer


def command(text: str, *, protected: tuple[str, ...] = ()) -> PermissionRequest:
    return PermissionRequest(
        tool_call_id="c1",
        name="run_command",
        title=f"running `{text}`",
        kind="execute",
        raw_input=json.dumps({"command": text}),
        protected=protected,
    )


def store(tmp_path: Path) -> PermissionStore:
    return PermissionStore(tmp_path / "ws", directory=tmp_path / "state")


PATTERN = PermissionAnswer(outcome="selected", option="allow_always", pattern=True)
ONCE = PermissionAnswer(outcome="selected", option="reject_once")


async def test_the_pattern_answer_remembers_the_rule_and_answers_later_calls(
    tmp_path: Path,
) -> None:
    asker = Asker(PATTERN)
    gate = PermissionGate(asker, store=store(tmp_path))
    assert await gate.check(command("pytest -q")) == ("allowed", "allow_pattern")
    [asked] = asker.asked
    assert asked.suggested is not None and asked.pattern_option_name == (
        "Always allow `pytest …` in this workspace (it runs this workspace's conftest.py and tests)"
    )
    assert store(tmp_path).listed() == [StoredRule(rule="run_command:pytest *", decision="allow")]

    asker.answer = ONCE
    assert await gate.check(command("pytest tests/a.py")) == ("allowed", "remembered")
    assert await gate.check(command("pytest; rm -rf ~")) == ("rejected", "reject_once")
    assert await gate.check(command("ls")) == ("rejected", "reject_once")
    assert asker.asked[-1].suggested is not None  # not a test runner: the exact command only
    assert asker.asked[-1].pattern_option_name == "Always allow `ls` in this workspace"
    assert asker.asked[-2].suggested is None  # nothing is offered for shell syntax


async def test_deny_wins_and_refuses_tools_that_do_not_ask(tmp_path: Path) -> None:
    asker = Asker(PermissionAnswer(outcome="selected", option="allow_once"))
    rules = RuleSet.parse(allow=["run_command"], deny=["run_command:rm *", "edit_file"])
    gate = PermissionGate(asker, store=store(tmp_path), rules=rules)
    assert await gate.check(command("make")) == ("allowed", "remembered")
    assert await gate.check(command("make && rm -rf build")) == ("rejected", "remembered")
    edit = PermissionRequest(
        tool_call_id="e1", name="edit_file", title="editing a.py", kind="edit", raw_input="{}"
    )
    assert gate.needs_asking("edit_file") and not gate.needs_asking("read_file")
    assert await gate.check(edit) == ("rejected", "remembered")
    assert asker.asked == []


async def test_no_rule_answers_a_protected_path(tmp_path: Path) -> None:
    asker = Asker(PermissionAnswer(outcome="selected", option="allow_once"))
    gate = PermissionGate(asker, store=store(tmp_path), rules=RuleSet.parse(allow=["run_command"]))
    assert await gate.check(command("touch .git/config", protected=(".git/config",))) == (
        "allowed",
        "allow_once",
    )
    [asked] = asker.asked
    assert asked.suggested is None and asked.pattern_option_name is None


def test_revoke_forgets_one_rule(tmp_path: Path) -> None:
    rules = store(tmp_path)
    rules.remember("delete_file", "reject")
    rules.remember("run_command", "allow")
    rules.remember_rule(RuleSet.parse(allow=["run_command:npm run *"]).allow[0])
    assert [(r.rule, r.decision) for r in rules.listed()] == [
        ("delete_file", "deny"),
        ("run_command", "allow"),
        ("run_command:npm run *", "allow"),
    ]
    assert not rules.revoke("delete_file", "allow")  # it is a deny rule
    assert rules.revoke("delete_file", "deny")
    assert rules.revoke("run_command:npm run *", "allow")
    assert not rules.revoke("run_command:npm run *", "allow")
    assert [r.rule for r in rules.listed()] == ["run_command"]


def test_an_unreadable_remembered_rule_is_skipped(tmp_path: Path) -> None:
    rules = store(tmp_path)
    rules.remember("delete_file", "allow")
    data = json.loads(rules.path.read_text())
    data["allow"] = ["run_command:* nope", "run_command:pytest *"]
    rules.path.write_text(json.dumps(data))
    assert [r.text for r in rules.rules().allow] == ["delete_file", "run_command:pytest *"]


async def test_runs_unasked_follows_the_rules_and_the_remembered_answers(tmp_path: Path) -> None:
    # What a candidate's trial may run: the rules and "always" answers that settle a call in
    # check() settle it here too, without asking anyone.
    asker = Asker(PATTERN)
    rules = RuleSet.parse(allow=["create_file"], deny=["run_command:rm *"])
    gated = frozenset({"run_command", "delete_file", "create_file"})
    gate = PermissionGate(asker, store=store(tmp_path), gated=gated, rules=rules)

    def run(text: str) -> ToolCall:
        return ToolCall(id="c1", name="run_command", arguments=json.dumps({"command": text}))

    assert gate.runs_unasked(ToolCall(id="r1", name="read_file", arguments="{}"))  # not gated
    assert gate.runs_unasked(ToolCall(id="n1", name="create_file", arguments="{}"))  # a rule
    assert not gate.runs_unasked(run("pytest -q"))  # gated, nothing says yet
    assert not gate.runs_unasked(ToolCall(id="d1", name="delete_file", arguments="{}"))

    assert await gate.check(command("pytest -q")) == ("allowed", "allow_pattern")
    assert gate.runs_unasked(run("pytest tests/a.py"))  # the remembered pattern
    assert not gate.runs_unasked(run("make"))
    assert not gate.runs_unasked(run("rm -rf build"))  # deny wins
    assert not gate.runs_unasked(ToolCall(id="c2", name="run_command", arguments="not json"))

    store(tmp_path).remember("delete_file", "allow")  # an "always" answer
    assert gate.runs_unasked(ToolCall(id="d2", name="delete_file", arguments="{}"))
    assert len(asker.asked) == 1  # only the check() above asked
