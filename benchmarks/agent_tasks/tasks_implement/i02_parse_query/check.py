"""Checker of i02_parse_query."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    Verdict,
    ok,
    parse_python,
    run_pytest,
    run_python,
    unchanged,
)


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "query.py")
    unchanged(workspace, Path(__file__).parent, "test_query.py")
    run_python(
        workspace,
        "from query import parse_query as p\n"
        "got = p('q=hello+world&n=a=b')\n"
        "assert got == {'q': ['hello world'], 'n': ['a=b']}, got\n"
        "assert p('&&') == {}\n"
        "assert p('my+key=1') == {'my key': ['1']}\n",
    )
    run_pytest(workspace, "test_query.py", expect=3)
    return ok("the tests and the hidden cases pass")
