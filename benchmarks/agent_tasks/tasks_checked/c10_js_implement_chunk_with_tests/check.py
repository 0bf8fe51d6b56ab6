"""Checker of c10_js_implement_chunk_with_tests."""

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
    node_syntax(workspace, "chunk.js")
    unchanged(workspace, Path(__file__).parent, "test/chunk.test.js")
    run_node(
        workspace,
        "const assert = require('node:assert');"
        "const { chunk } = require('./chunk');"
        "assert.deepStrictEqual(chunk([1, 2, 3], 1), [[1], [2], [3]]);"
        "assert.deepStrictEqual(chunk([1, 2, 3], 5), [[1, 2, 3]]);"
        "const input = [1, 2, 3, 4]; chunk(input, 3); assert.deepStrictEqual(input, [1, 2, 3, 4]);"
        "assert.throws(() => chunk([1], 0), RangeError);",
    )
    run_node_tests(workspace, "test/")
    return ok("chunk passes npm test and the hidden cases")
