"""Checker of c06_keyword_rename_breaks_callers."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    function,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    fn = function(parse_python(workspace, "net.py"), "fetch", "net.py")
    params = [a.arg for a in fn.args.args]
    if "timeout_s" not in params or "timeout" in params:
        raise CheckFailed(f"fetch takes {params}")
    for name in ("sync.py", "health.py"):
        for node in ast.walk(parse_python(workspace, name)):
            if isinstance(node, ast.keyword) and node.arg == "timeout":
                raise CheckFailed(f"{name} line {node.value.lineno} still passes timeout=")
    run_python(
        workspace,
        "from sync import pull_all\n"
        "from health import probe, probe_default\n"
        "assert pull_all(['a']) == [{'url': 'a', 'timeout': 30, 'retries': 1}], pull_all(['a'])\n"
        "assert probe('h') == {'url': 'h', 'timeout': 2, 'retries': 3}, probe('h')\n"
        "assert probe_default('h')['timeout'] == 5\n",
    )
    return ok("fetch takes timeout_s; the callers pass it by its new name")
