"""Checker of t04_print_to_logging."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    calls_to,
    imported_modules,
    ok,
    parse_python,
    run_python,
)

LOG_METHODS = {"debug", "info", "warning", "error", "critical", "exception", "log"}


def check(workspace: Path) -> Verdict:
    tree = parse_python(workspace, "worker.py")
    if calls_to(tree, "print"):
        raise CheckFailed("worker.py still calls print")
    if "logging" not in imported_modules(tree):
        raise CheckFailed("worker.py does not import logging")
    log_calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in LOG_METHODS
    ]
    if len(log_calls) < 2:
        raise CheckFailed(f"{len(log_calls)} logging call(s), expected one per former print")
    run_python(
        workspace,
        "import io, contextlib, worker\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    assert worker.process(['a', 'b']) == ['A', 'B']\n"
        "assert buf.getvalue() == '', buf.getvalue()\n",
    )
    return ok("prints replaced by logging calls; process() unchanged")
