"""Checker of c13_js_fix_failing_test."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    Verdict,
    node_syntax,
    ok,
    run_node,
    run_node_tests,
    unchanged,
)


def check(workspace: Path) -> Verdict:
    node_syntax(workspace, "src/range.js")
    unchanged(workspace, Path(__file__).parent, "test/range.test.js")
    run_node_tests(workspace, "test/")
    run_node(
        workspace,
        "const assert = require('node:assert');"
        "const { range } = require('./src/range');"
        "assert.deepStrictEqual(range(-2, 1), [-2, -1, 0]);"
        "assert.deepStrictEqual(range(1, 8, 2), [1, 3, 5, 7]);"
        "assert.deepStrictEqual(range(5, 1), []);",
    )
    return ok("range excludes its end; the tests pass unchanged")
