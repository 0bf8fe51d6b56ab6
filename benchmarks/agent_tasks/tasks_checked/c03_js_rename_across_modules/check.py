"""Checker of c03_js_rename_across_modules."""

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

FILES = ("parse.js", "load.js", "stats.js")


def check(workspace: Path) -> Verdict:
    for name in FILES:
        node_syntax(workspace, name)
        names = js_identifiers((workspace / name).read_text(encoding="utf-8"))
        if "parseRow" in names:
            raise CheckFailed(f"{name} still uses parseRow")
        if "parseRecord" not in names:
            raise CheckFailed(f"{name} does not use parseRecord")
    out = run_node(
        workspace,
        "const { parseRecord } = require('./parse');"
        "const { totalByRegion, largest } = require('./stats');"
        "const t = totalByRegion("
        "'2024-01-01, north, 5\\n2024-01-02, south, 7\\n2024-01-03, north, 1\\n');"
        "if (t.north !== 6 || t.south !== 7) throw new Error('totals ' + JSON.stringify(t));"
        "if (largest(['d, a, 3', 'd, b, 9']) !== 9) throw new Error('largest');"
        "console.log(parseRecord('d, r, 2').amount);",
    )
    if out.strip() != "2":
        raise CheckFailed(f"parseRecord printed {out.strip()!r}")
    return ok("parseRecord in all three files; the totals still add up")
