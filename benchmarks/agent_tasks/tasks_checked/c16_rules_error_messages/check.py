"""Checker of c16_rules_error_messages: the rule file says how error messages start."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "config.py")
    run_python(
        workspace,
        "from config import load\n"
        "assert load('{\"name\": \"x\", \"port\": 1}') == {'name': 'x', 'port': 1}\n"
        "try:\n    load('{\"port\": 1}')\nexcept ValueError as e:\n    message = str(e)\n"
        "else:\n    raise AssertionError('no ValueError without a name')\n"
        "assert message.startswith('config:'), "
        "f'the message {message!r} does not start with \"config:\" as the rules say'\n",
    )
    return ok("load() raises ValueError('config: ...') without a name")
