"""Checker of t11_js_rename_variable."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    js_identifiers,
    node_syntax,
    ok,
    run_node,
)


def check(workspace: Path) -> Verdict:
    node_syntax(workspace, "counter.js")
    names = js_identifiers((workspace / "counter.js").read_text(encoding="utf-8"))
    if "cnt" in names:
        raise CheckFailed("counter.js still uses the identifier cnt")
    if "count" not in names:
        raise CheckFailed("counter.js has no identifier count")
    run_node(
        workspace,
        "const c = require('./counter.js'); const assert = require('assert');"
        "assert.strictEqual(c.increment(), 1); assert.strictEqual(c.increment(), 2);"
        "c.reset(); assert.strictEqual(c.increment(), 1);",
    )
    return ok("cnt renamed to count; counter still counts")
