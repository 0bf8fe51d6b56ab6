"""Checker of t17_js_fix_loop."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, node_syntax, ok, run_node


def check(workspace: Path) -> Verdict:
    node_syntax(workspace, "total.js")
    run_node(
        workspace,
        "const { sum } = require('./total.js'); const assert = require('assert');"
        "assert.strictEqual(sum([1, 2, 3]), 6); assert.strictEqual(sum([5]), 5);"
        "assert.strictEqual(sum([]), 0);",
    )
    return ok("sum adds every element")
