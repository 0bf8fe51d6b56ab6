"""Checker of i01_wrap_words."""

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
    parse_python(workspace, "textwrap2.py")
    unchanged(workspace, Path(__file__).parent, "test_textwrap2.py")
    run_python(
        workspace,
        "from textwrap2 import wrap as w\n"
        "got = w('one  two\\nthree four', 9)\n"
        "assert got == ['one two', 'three', 'four'], got\n"
        "assert w('abc def', 7) == ['abc def']\n"
        "assert w('abc def', 6) == ['abc', 'def']\n"
        "assert w('', 3) == []\n",
    )
    run_pytest(workspace, "test_textwrap2.py", expect=3)
    return ok("the tests and the hidden cases pass")
