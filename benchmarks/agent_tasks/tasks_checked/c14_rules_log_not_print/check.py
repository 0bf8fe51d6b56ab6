"""Checker of c14_rules_log_not_print: the rule file says how to report (a logger, no print)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    calls_to,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    tree = parse_python(workspace, "store.py")
    if calls_to(tree, "print"):
        raise CheckFailed("store.py calls print(); AGENTS.md says to use the module's logger")
    run_python(
        workspace,
        "import logging, tempfile, os\n"
        "seen = []\n"
        "class H(logging.Handler):\n"
        "    def emit(self, record):\n"
        "        seen.append((record.name, record.levelno, record.getMessage()))\n"
        "root = logging.getLogger()\nroot.addHandler(H())\nroot.setLevel(logging.DEBUG)\n"
        "import store\n"
        "path = os.path.join(tempfile.mkdtemp(), 'out.jsonl')\n"
        "store.save([{'a': 1}, {'a': 2}, {'a': 3}], path)\n"
        "assert open(path).read().count('\\n') == 3, 'the records are not all written'\n"
        "mine = [s for s in seen if s[0] == 'store']\n"
        "assert mine, f'nothing logged by the store logger: {seen}'\n"
        "assert any(level == logging.INFO and '3' in text for _, level, text in mine), mine\n",
    )
    return ok("save() logs the count at INFO with the module logger; no print")
